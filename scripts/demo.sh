#!/usr/bin/env bash
# `make demo`: validate the bundled tasks, then run a small batch and print the score table.
#
# No API key needed: the batch runs the `oracle` (reference solution) and `null`
# (does nothing) policies, so the table shows each rubric's full range, e.g.
# 162/162 vs 0/162, and the bundled real model (SmolLM2-135M-Instruct, on the
# CPU) on the shortest tasks, so its real scores sit next to them. With
# OPENAI_BASE_URL or OPENAI_API_KEY set, the batch runs that model through the
# `openai` policy instead (OPENAI_MODEL, default gpt-4o-mini); set
# EGYM_JUDGE_MODEL (a different model) to have judge items graded too.
#
# Knobs: DEMO_TASKS (default tasks/acme), DEMO_SAMPLES (1), DEMO_CONCURRENCY (2),
# DEMO_MODEL_TASKS (the tasks the bundled model tries; "" skips it),
# DEMO_ARGS (extra arguments for validate and batch, e.g. "-H max_turns=20"),
# EGYM_STORE (default .egym/runs.db, so `egym serve` shows the demo runs).
set -uo pipefail
cd "$(dirname "$0")/.."

EGYM=${EGYM:-.venv/bin/egym}
TASKS=${DEMO_TASKS:-tasks/acme}
SAMPLES=${DEMO_SAMPLES:-1}
CONCURRENCY=${DEMO_CONCURRENCY:-2}
MODEL_TASKS=${DEMO_MODEL_TASKS-tasks/acme/collections-list tasks/acme/march-sla-breaches tasks/acme/easter-coverage}
read -r -a EXTRA <<< "${DEMO_ARGS:-}"
STAMP=$(date +%Y%m%d-%H%M%S)
failed=0

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

batch() {  # batch POLICY RUN [extra args...]
  local policy=$1 run=$2
  shift 2
  "$EGYM" batch $TASKS --policy "$policy" --samples "$SAMPLES" --concurrency "$CONCURRENCY" --run "$run" "$@" \
    "${EXTRA[@]}" >/dev/null || failed=1
}

step "egym validate $TASKS  (oracle full score, null <= 10%, no rubric holes, cheats no better than null)"
"$EGYM" validate $TASKS --concurrency "$CONCURRENCY" "${EXTRA[@]}" || failed=1

if [ -n "${OPENAI_BASE_URL:-}" ] || [ -n "${OPENAI_API_KEY:-}" ]; then
  model=${OPENAI_MODEL:-gpt-4o-mini}
  step "egym batch $TASKS --policy openai --model $model  (${OPENAI_BASE_URL:-https://api.openai.com/v1})"
  batch openai "demo-$STAMP-model" --model "$model"
  step "scores"
  "$EGYM" runs "demo-$STAMP-model"
else
  step "egym batch $TASKS --policy oracle, then --policy null  (no API key: set OPENAI_API_KEY to run a model)"
  batch oracle "demo-$STAMP-oracle"
  batch null "demo-$STAMP-null"
  runs=("demo-$STAMP-oracle" "demo-$STAMP-null")
  if [ -n "$MODEL_TASKS" ]; then
    # The first turn must be a tool call (tool_choice=first): cold, SmolLM2 almost never calls one.
    step "egym batch <${MODEL_TASKS// /, }> --policy hf --model smollm2  (the bundled 135M model, on the CPU)"
    "$EGYM" batch $MODEL_TASKS --policy hf --model smollm2 -o tool_choice=first -o seed=0 -H max_turns=4 \
      --samples "$SAMPLES" --concurrency "$CONCURRENCY" --run "demo-$STAMP-smollm2" >/dev/null || failed=1
    runs+=("demo-$STAMP-smollm2")
  fi
  step "scores: the reference solution vs doing nothing${MODEL_TASKS:+ vs SmolLM2-135M}"
  "$EGYM" runs "${runs[@]}"
  if [ -z "${EGYM_JUDGE_MODEL:-}" ]; then
    echo "'incomplete': the task's LLM-judge items were not graded (no judge model: set EGYM_JUDGE_MODEL and"
    echo "OPENAI_API_KEY or EGYM_JUDGE_BASE_URL); their points count as not earned. Every deterministic item"
    echo "passes for the oracle, as the validate table above shows."
  fi
fi

step "next: egym runs | egym show ROLLOUT | egym serve"
exit $failed
