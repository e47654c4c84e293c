"""Does GRPO learn here? Three training seeds against rejection-sampling fine-tuning and more SFT at the
same compute, from the SFT model of bench_bands.py, on an evaluation whose own noise is measured.

    nohup nice -n 15 .venv/bin/python bench/bench_learning.py > .egym/bench-learning.log 2>&1 &
        -> bench/results/learning.json (rewritten as stages land; `complete: false` until the end)
    .venv/bin/python bench/bench_learning.py --report   # learning.json again from the committed arms

Every stage is the user's own command, run as a whole process and journalled in
.egym/bench-learning/stages.json, so a rerun goes on where a stop left it (a training run resumes
from its last checkpoint, a batch from its stored rollouts). Each arm (a model and its evaluation)
lands, once evaluated, in bench/results/learning-arms.json with its episodes' outcomes and its
training diagnostics, next to the plan (learning-plan.json): both are committed, so a later session
(a fresh checkout, without .egym or its checkpoints) goes on with the next arm; the arm a fresh
checkout cut off starts again. No stage reads test results to choose anything: the recipe is
chosen on the val split, and the last checkpoint of each run is evaluated (none is chosen).

- start: SmolLM2-135M after bench_bands.py's SFT (oracle turns of train level 0, compact prompt),
  trained by its stages here when .egym lacks it, with bench.common.PINNED_NUMERICS. The curriculum
  reads the bands bench_bands calibrated (BANDS_KEY). A first attempt started from the SFT model
  those bands were measured on; a fresh machine (its CPU's code paths not pinned then) trained other
  weights from the same data, so its arms are kept apart (learning-ac7926.json, learning-arms-ac7926.json).
  The pins hold on AMD EPYCs, not across vendors (an Intel Xeon trained other weights): a machine
  whose numerics probe (bench/numerics_probe.py) differs from the arms' tries MKL's other branches
  (bench.common.MKL_BRANCHES), takes the one that computes the arms' bits, and stops before the SFT
  when none does.
- evaluation: the held-out level-0 episodes of bench_warmstart.py (unseen seeds of the train
  families, and the held-out families), 2 samples each (`-k 2`) at temperature 0.7, which is also
  the training temperature, compact prompt, 256 new tokens a turn. The SFT model is evaluated twice
  with two sampling seeds: the control, whose flips are the noise floor of any comparison.
- the recipe, chosen on val: GRPO seed 0 with each of LEARNING_RATES (the ends of the issue's
  1-3e-6), all else fixed beforehand (RECIPE below); each run's last checkpoint and the SFT model are
  evaluated on one val-split level-0 instance of each train family, 2 samples each. The higher val
  pass@1 wins, a tie going to the first rate. The winner's run is GRPO seed 0.
- GRPO x 3 seeds: RECIPE with the chosen rate, STEPS steps of TASKS_PER_STEP groups of GROUP rollouts.
- RFT at the same compute: as many rollouts of the SFT model as one GRPO run samples, one on each
  of as many distinct train level-0 instances; the ones with full score become SFT data (committed,
  learning-rft-data/, as bench_bands' SFT data is); one epoch from the SFT model. The sampling
  outlasts a session, as an evaluation can: both run in parts of PART_ROLLOUTS rollouts, their done
  rollouts journalled after each part (learning-rft-sample.jsonl.gz, learning-eval-ARM.jsonl.gz,
  committed), and a fresh checkout restores them before it goes on. RFT runs before the GRPO seeds
  (no arm reads another's outcome, so the order changes none).
- more SFT at the same compute: the SFT data again from the SFT model, for as many epochs as fit
  in GRPO seed 0's training time, an epoch's time being the SFT stage's own. Both times must come
  from one machine, and machines of one CPU model differ, so the count is fixed in the plan once
  known: 4, from 17,351 s over the SFT stage's 3,922 s on the machine that trained grpo-s0
  (2026-11-29; 4.4). The SFT took 4,549 s of step time on 2026-12-01's machine (3.8, also 4) and
  3,522 s on 2026-12-02's, which against grpo-s0's time from another machine would give 5.
Compared with `gym.batch.paired`: pass@1 over each episode's samples, difference with a 95 %
interval resampling families, McNemar counts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from bench.bench_bands import HARNESS, SFT, sft_model  # noqa: E402
from bench.bench_warmstart import (  # noqa: E402
    ACME,
    EGYM,
    STEP_KEYS,
    Stages,
    busy_seconds,
    compare_outcomes,
    first_ids,
    held_out_ids,
    kept_dataset,
    kept_record,
    level0,
)
from bench.common import RESULTS, cpu, mkl_branch_computing, numerics_probe, pin_numerics, write  # noqa: E402
from gym.batch import paired as paired_runs  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402
from gym.families import families, generate  # noqa: E402
from gym.models.identity import local_model_key  # noqa: E402
from gym.sft import below_min_score  # noqa: E402
from gym.store import Store  # noqa: E402
from gym.store.models import RolloutRow, new_id  # noqa: E402
from trainer.checkpoint import list_checkpoints  # noqa: E402

WORK = ROOT / ".egym" / "bench-learning"
SFT_MODEL = SFT / "model"
SFT_DATA = SFT.parent / "data"
# The curriculum reads the bands bench_bands calibrated, whichever machine trained this session's SFT model.
BANDS_KEY = json.loads((RESULTS / "bands.json").read_text())["model_key"]
STORE = WORK / "runs.db"
PLAN = RESULTS / "learning-plan.json"  # committed, as the arms are: fixed at the first start
ARMS = RESULTS / "learning-arms.json"
RFT_DATA = RESULTS / "learning-rft-data"  # committed: RFT's kept rollouts as SFT data
RFT_SAMPLE = "rft-sample"  # the stored run of RFT's sampling
RFT_MIN_SCORE = 1.0  # what RFT keeps
# The rollouts an `egym batch` call samples (10-20 min here): a long batch runs in parts of as many, each
# part's done rollouts journalled in a committed file (journalled_batch), so that it goes on across sessions.
PART_ROLLOUTS = 80
TRAIN_SEEDS = "0-49"
TEMPERATURE = 0.7
STEPS, TASKS_PER_STEP, GROUP = 20, 4, 8
ROLLOUTS = STEPS * TASKS_PER_STEP * GROUP  # what one GRPO run samples; RFT samples as many
LEARNING_RATES = ("3e-6", "1e-6")  # tried on val; a tie goes to the first (the choice made before any run)
HELD_OUT_ARMS = ("sft", "sft-control", "grpo-s0", "grpo-s1", "grpo-s2", "rft", "more-sft")
VAL_ARMS = ("val-sft", *(f"val-grpo-lr{lr}" for lr in LEARNING_RATES))
GRPO_RUNS = len(LEARNING_RATES) + 2  # seed 0 at each rate, then seeds 1 and 2 at the chosen one
RECIPE = [
    "model.lora.enabled=false",  # a full fine-tune, as the SFT
    "optim.warmup_steps=3",
    f"rollout.group_size={GROUP}",
    f"rollout.tasks_per_step={TASKS_PER_STEP}",
    "rollout.concurrency=4",
    "rollout.resample_rounds=1",
    f"sampling.temperature={TEMPERATURE}",
    "sampling.max_new_tokens=256",
    "rollout.options.harness.prompt=compact",
    "loss.kl_coef=0.0",  # KL to the SFT model is logged every step all the same
    f"tasks.curriculum.bands_of={BANDS_KEY}",
]
EVAL = [
    "-o",
    "seed={seed}",
    "-o",
    f"temperature={TEMPERATURE}",
    "-o",
    "top_p=1.0",
    "-o",
    "max_new_tokens=256",
]
EVAL += HARNESS


def journal_of(run: str) -> Path:
    """The committed journal of a stored run that `journalled_batch` samples."""
    return RESULTS / f"learning-{run}.jsonl.gz"


def journalled_batch(
    stages: Stages, run: str, ids: list[str], model: Path, options: list[str], *, samples: int, keep=None
) -> None:
    """`egym batch` of `samples` rollouts of each of `ids` as the stored run `run`, in parts of about
    PART_ROLLOUTS rollouts (stages RUN-1, RUN-2, ...). After each part the run's done rollouts go to its
    committed journal (journal_of), with the trajectories of those `keep(row)` holds for; a fresh checkout
    (no .egym) restores them into its store first, and the batch samples only the rest."""
    journal = journal_of(run)
    if journal.is_file():
        restored = restore_run(STORE, run, journal, model=str(model))
        print(f"{run}: {restored} done rollouts restored from {journal.relative_to(ROOT)}", flush=True)
    per_part = max(1, PART_ROLLOUTS // samples)
    for number, first in enumerate(range(0, len(ids), per_part), 1):
        stages.run(
            f"{run}-{number}",
            [*EGYM, "batch", *ids[first : first + per_part], "-k", str(samples), "--policy", "hf"]
            + ["--model", str(model), *options, "--concurrency", "4", "--run", run, "--store", str(STORE)],
        )
        journal_run(STORE, run, journal, keep or (lambda row: False))


def evaluate(stages: Stages, name: str, model: Path, episodes: list[str], seed: int) -> str:
    """The arm's evaluation, 2 samples an episode, as the stored run eval-NAME (journalled in parts)."""
    run = f"eval-{name}"
    journalled_batch(stages, run, episodes, model, [part.format(seed=seed) for part in EVAL], samples=2)
    return run


class Arms:
    """learning-arms.json: each evaluated arm, written as soon as its evaluation lands.

    An arm keeps what the report needs and .egym loses: its episodes' outcomes, its evaluation's
    time, and a training run's diagnostics. All arms start from one SFT model, named by its key:
    a session whose SFT did not reproduce stops rather than compare two starts. The file also keeps
    `numerics`, bench/numerics_probe.py's fingerprint on the first machine found to reproduce the
    start with it, so that another kind of machine stops in seconds (check_numerics), not after the SFT."""

    def __init__(self, start: str, numerics: dict | None = None):
        kept = json.loads(ARMS.read_text()) if ARMS.is_file() else {"start": start, "arms": {}}
        if kept["start"] != start:
            sys.exit(
                f"{ARMS.relative_to(ROOT)} holds arms from the SFT model {kept['start']}, not {start}: "
                f"the SFT did not reproduce on this CPU ({cpu()}); move the file aside to start over"
            )
        self.start, self.done, self.numerics = start, kept["arms"], kept.get("numerics")
        if self.numerics is None and numerics is not None:
            self.numerics = numerics
            self._write()

    def _write(self) -> None:
        kept = {
            "start": self.start,
            **({"numerics": self.numerics} if self.numerics else {}),
            "arms": self.done,
        }
        ARMS.write_text(json.dumps(kept, indent=1) + "\n")

    def __contains__(self, name: str) -> bool:
        return name in self.done

    def outcomes(self, name: str) -> dict[tuple[str, int], bool]:
        return {(task, sample): passed for task, sample, passed in self.done[name]["outcomes"]}

    def land(self, name: str, run: str, **extra) -> None:
        rows = rows_of(run)
        outcomes = sorted(paired_runs.outcomes(rows).items())
        self.done[name] = {
            "outcomes": [[task, sample, passed] for (task, sample), passed in outcomes],
            "eval_seconds": busy_seconds(rows),
            # where it landed: the arms' times compare only on one kind of machine, and a machine of
            # another vendor may compute under another MKL branch (check_numerics)
            "landed_on": {"cpu": cpu(), "mkl_cbwr": os.environ.get("MKL_CBWR", "")},
            **extra,
        }
        self._write()


def check_numerics(probe: str) -> None:
    """Stop before the SFT's hour on a machine whose kernels compute other bits than those of the machine
    the arms' start model was trained on: its SFT would give other weights. Unless another of MKL's branches
    computes those bits here: then this run's children take it (the SFT model's key still decides)."""
    kept = json.loads(ARMS.read_text()) if ARMS.is_file() else {}
    if not kept.get("numerics") or kept["numerics"]["probe"] == probe:
        return
    wanted, where = kept["numerics"]["probe"], kept["numerics"]["cpu"]
    print(f"numerics probe {probe}, not {wanted} ({where}): trying MKL's other branches", flush=True)
    branch = mkl_branch_computing(wanted)
    if branch is None:
        sys.exit(
            f"this CPU ({cpu()}) computes other bits than the one {ARMS.relative_to(ROOT)}'s start model was "
            f"trained on ({where}; numerics probe {probe}, not {wanted}, under any of MKL's branches): "
            f"its SFT would not reproduce {kept['start']}; the arms go on on a machine of that kind"
        )
    os.environ["MKL_CBWR"] = branch
    print(f"this CPU computes the arms' bits with MKL_CBWR={branch}: this run takes it", flush=True)


def grpo_dir(lr: str, seed: int) -> Path:
    return WORK / f"grpo-lr{lr}-s{seed}"


def grpo(stages: Stages, lr: str, seed: int, refs: list[str]) -> Path:
    """A GRPO run (resumed from its last checkpoint if cut off); its last checkpoint's model."""
    out = grpo_dir(lr, seed)
    paths = ",".join(f"{ref}@{TRAIN_SEEDS}" for ref in refs)
    # A checkpoint every step (seconds each): a step takes 10-25 min here, and a stop loses what
    # follows the last checkpoint. A resumed run is exact (tests/trainer/test_learning.py).
    stages.run(
        out.name,
        [*EGYM, "train", "trainer/configs/gym-cpu.yaml", f"model.path={SFT_MODEL}", f"seed={seed}"]
        + [f"tasks.paths=[{paths}]", "tasks.include=['*-l0-*']", f"steps={STEPS}", "checkpoint.interval=1"]
        + [f"output_dir={out}", f"optim.lr={lr}", *RECIPE],
    )
    return list_checkpoints(out / "checkpoints")[-1] / "model"


def chosen_lr(arms: Arms) -> str:
    """The learning rate whose seed-0 run passes most val episodes (`max` keeps the first of a tie)."""
    return max(LEARNING_RATES, key=lambda lr: paired_runs.pass_at_1(arms.outcomes(f"val-grpo-lr{lr}")))


def train_instances(train, count: int) -> list[str]:
    """`count` distinct train-split level-0 instances, one family after another in turn (seeds from 0)."""
    queues = {f.name: f for f in train}
    seen, ids, seed = set(), [], 0
    while len(ids) < count and seed < 200:
        for family in queues.values():
            instance = generate(family, 0, seed)
            if family.split_of(instance) == "train" and instance.digest() not in seen and len(ids) < count:
                seen.add(instance.digest())
                ids.append(f"{family.world}/{family.instance_id(0, seed)}")
        seed += 1
    return ids


def rft(stages: Stages, ids: list[str], start: str) -> Path:
    """Rejection sampling: one rollout of the SFT model on each instance, full scores kept, one epoch.

    The sampling (about 2.3 h on 2 cores) outlasts a session, and a fresh checkout has no .egym: it is
    a journalled batch, the rollouts it keeps journalled with their trajectories. The kept rollouts'
    data is committed (RFT_DATA) as soon as it is made, with the sampling's time and the model sampled:
    a fresh checkout then trains on it again instead of sampling again."""
    if kept_record(RFT_DATA) is None:
        options = [p.format(seed=100) for p in EVAL]
        journalled_batch(stages, RFT_SAMPLE, ids, SFT_MODEL, options, samples=1, keep=kept_by_rft)
    data, out = WORK / "rft-data", WORK / "rft"
    made = kept_dataset(
        stages,
        "rft-data",
        [*EGYM, "sft-data", *ids, "--no-oracle", "--from-run", RFT_SAMPLE, "--min-score", str(RFT_MIN_SCORE)]
        + ["--out", str(data), "--store", str(STORE), *HARNESS],
        data,
        RFT_DATA,
        then=lambda: {"sampled_from": start, "sample_seconds": busy_seconds(rows_of(RFT_SAMPLE))},
    )
    if made["sampled_from"] != start:
        sys.exit(f"{RFT_DATA.relative_to(ROOT)} was sampled from {made['sampled_from']}, not {start}")
    stages.run(
        "rft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={data}", f"output_dir={out}"]
        + [f"model.path={SFT_MODEL}", "epochs=1", "lr=1e-4", "prompt=compact"],
    )
    return out / "model"


def kept_by_rft(row: RolloutRow) -> bool:
    """Whether `egym sft-data --min-score RFT_MIN_SCORE` keeps the rollout's grade (sft-data's own rule)."""
    return below_min_score(row, RFT_MIN_SCORE) is None


# What a done rollout keeps in a journal: what lets the batch skip it on resume, gives the sampling's
# time (busy_seconds) and lets `egym sft-data` keep or skip it. Its trajectory only where it is kept
# (about 90 kB each: all 640 would not be worth committing).
JOURNALLED = (
    "task",
    "sample",
    "attempts",
    "started_at",
    "finished_at",
    "seconds",
    "policy_seconds",
    "stop_reason",
    "turns",
    "reward",
    "earned",
    "possible",
    "incomplete",
    "gated",
    "passed",
    "grade_meta",
)
WHEN = ("started_at", "finished_at")


def journal_run(store: Path, run: str, journal: Path, with_trajectory) -> int:
    """Write `run`'s done rollouts to `journal` (gzipped JSON lines, rewritten whole), the trajectory of
    those `with_trajectory(row)` holds for; returns how many. The first line is the run's own record."""
    runs = Store(str(store))
    try:
        record = runs.get_run(run)
        rows = [row for row in runs.list_rollouts(run) if row.status == "done"]
    finally:
        runs.close()
    lines = [{"run": {"kind": record.kind, "policy": record.policy, "config": record.config}}]
    for row in rows:
        fields = {key: getattr(row, key) for key in JOURNALLED}
        fields |= {key: fields[key] and fields[key].isoformat() for key in WHEN}
        if with_trajectory(row):
            fields["trajectory"] = row.trajectory_model().model_dump(mode="json")
        lines.append(fields)
    text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    journal.write_bytes(gzip.compress(text.encode(), mtime=0))
    return len(rows)


def read_journal(journal: Path) -> tuple[dict, list[dict]]:
    """A journal's run record and its rollouts' fields, as journal_run wrote them."""
    record, *rows = (json.loads(line) for line in gzip.decompress(journal.read_bytes()).splitlines())
    return record, rows


def restore_run(store: Path, run: str, journal: Path, *, model: str) -> int:
    """Put `journal`'s rollouts into `run` of `store` as done, where it lacks them done, creating the run
    as `egym batch --run RUN --model MODEL` would (the model's path differs between checkouts); returns
    how many were restored."""
    record, rows = read_journal(journal)
    runs = Store(str(store))
    try:
        runs.create_run(run, model=model, tasks=sorted({row["task"] for row in rows}), **record["run"])
        with runs.session() as session:
            stored = session.scalars(select(RolloutRow).where(RolloutRow.run_id == run))
            have = {(r.task, r.sample): r for r in stored}
            restored = 0
            for fields in rows:
                row = have.get((fields["task"], fields["sample"]))
                if row is not None and row.status == "done":
                    continue
                if row is None:
                    row = RolloutRow(id=new_id(), run_id=run)
                    session.add(row)
                fields |= {key: fields[key] and dt.datetime.fromisoformat(fields[key]) for key in WHEN}
                for key, value in fields.items():
                    setattr(row, key, value)
                row.status, row.owner = "done", None
                restored += 1
    finally:
        runs.close()
    return restored


def rft_sampling(plan: dict) -> tuple[int, float] | None:
    """RFT's sampled rollouts and their time, once its data is kept."""
    made = kept_record(RFT_DATA)
    return None if made is None else (len(plan["rft_instances"]), made["sample_seconds"])


def training_seconds(run: Path) -> float:
    """A training run's own time, the sum of its steps' (across the sessions a GRPO run was resumed in;
    a stage's `seconds` count only its last invocation)."""
    return sum(
        step.model_dump().get("time_step") or 0.0 for step in read_metrics(run / "metrics.jsonl").steps
    )


def write_plan(plan: dict) -> None:
    PLAN.write_text(json.dumps(plan, indent=1) + "\n")


def more_sft_epochs(plan: dict, grpo_seconds: float) -> int:
    """As many SFT epochs as fit in GRPO seed 0's training time, an epoch's time being the SFT stage's
    own (one epoch of the same data and settings); fixed in the committed plan once known."""
    if "more_sft_epochs" not in plan:
        plan["more_sft_epochs"] = max(1, round(grpo_seconds / training_seconds(SFT)))
        write_plan(plan)
    return plan["more_sft_epochs"]


def more_sft(stages: Stages, epochs: int) -> Path:
    """The SFT data again, from the SFT model, for `epochs` epochs."""
    out = WORK / "more-sft"
    stages.run(
        "more-sft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={SFT_DATA}", f"model.path={SFT_MODEL}"]
        + ["lr=1e-4", f"epochs={epochs}", "prompt=compact", f"output_dir={out}"],
        then=lambda: {"epochs": epochs},
    )
    return out / "model"


def rows_of(run: str) -> list:
    store = Store(str(STORE))
    try:
        return store.list_rollouts(run)
    finally:
        store.close()


def per_step(run: Path) -> list[dict]:
    keys = (*STEP_KEYS, "kl_ref", "entropy", "grad_norm", "clip_frac", "lr", "tokens_model", "tokens_total")
    return [
        {k: v for k, v in s.model_dump().items() if k in keys}
        for s in read_metrics(run / "metrics.jsonl").steps
    ]


def recipe_search(arms: Arms, val: list[str]) -> dict:
    """What was tried on val, each rate's run against the SFT model there, and the rate chosen."""
    tried = {
        lr: compare_outcomes(arms.outcomes("val-sft"), arms.outcomes(f"val-grpo-lr{lr}"))
        for lr in LEARNING_RATES
        if f"val-grpo-lr{lr}" in arms and "val-sft" in arms
    }
    return {
        "tried": "optim.lr in " + ", ".join(LEARNING_RATES) + " with training seed 0; all else as `recipe`",
        "val_episodes": len(val),
        "rule": "the higher val pass@1 (2 samples an episode); a tie goes to the first rate",
        "against_sft_on_val": tried,
        "chosen_lr": chosen_lr(arms) if len(tried) == len(LEARNING_RATES) else None,
        "note": "the search's other run is GRPO compute that RFT and more SFT are not given",
    }


def whole_run(plan: dict, arms: Arms) -> str:
    """The whole run's progress in rollouts (evaluations, GRPO's and RFT's sampling, not the SFT runs) and
    its time left at the rate so far, busy time across sessions, plus more SFT's training (as long as
    GRPO seed 0's, by construction). A landed arm counts from the arms' file, which a fresh checkout
    keeps; a batch in flight from the run store or, where the store has fewer (a fresh checkout's, before
    the batch restores them), its committed journal; training from its metrics."""
    held = sum(len(ids) for ids in plan["held_out"].values())
    total = 2 * held * len(HELD_OUT_ARMS) + 2 * len(plan["val"]) * len(VAL_ARMS)
    total += GRPO_RUNS * ROLLOUTS + len(plan["rft_instances"])

    def stored(run: str) -> tuple[int, float]:
        rows = [r for r in rows_of(run) if r.finished_at]
        journal = journal_of(run)
        if journal.is_file():  # a fresh checkout's store lacks them until its batch restores them
            spans = [
                SimpleNamespace(**{k: row[k] and dt.datetime.fromisoformat(row[k]) for k in WHEN})
                for row in read_journal(journal)[1]
            ]
            rows = max(rows, spans, key=len)
        return len(rows), busy_seconds(rows)

    sampled = [
        (len(arms.done[name]["outcomes"]), arms.done[name]["eval_seconds"])
        if name in arms
        else stored(f"eval-{name}")
        for name in (*HELD_OUT_ARMS, *VAL_ARMS)
    ]
    sampled.append(rft_sampling(plan) or stored(RFT_SAMPLE))
    done, seconds = sum(n for n, _ in sampled), sum(t for _, t in sampled)
    trained = {}  # a GRPO run's folder -> its steps and their seconds; the landed arms' first
    for name, landed in arms.done.items():
        if "per_step" in landed:
            seed = int(name.removeprefix("grpo-s")) if name.startswith("grpo-s") else 0
            trained[grpo_dir(landed["lr"], seed).name] = len(landed["per_step"]), landed["training_seconds"]
    for metrics in sorted(WORK.glob("grpo-lr*-s*/metrics.jsonl")):
        if metrics.parent.name not in trained:
            trained[metrics.parent.name] = len(read_metrics(metrics).steps), training_seconds(metrics.parent)
    for steps, run_seconds in trained.values():
        done, seconds = done + steps * TASKS_PER_STEP * GROUP, seconds + run_seconds
    line = f"whole run: {done:,.0f}/{total:,} rollouts ({100 * done / total:.0f} %)"
    if done and seconds:
        left = (total - done) * seconds / done
        if "grpo-s0" in arms and "more-sft" not in arms:
            left += arms.done["grpo-s0"]["training_seconds"]
        line += f", about {left / 3600:.1f} h left at {60 * done / seconds:.1f}/min so far"
    return line


def pass_by_part(outcomes: dict[tuple[str, int], bool], parts: dict[str, list[str]]) -> dict:
    """An arm's pass@1 over all its episodes and over each part of the held-out set."""
    result = {"all": round(paired_runs.pass_at_1(outcomes), 4)}
    for part, ids in parts.items():
        wanted = set(ids)
        kept = {episode: passed for episode, passed in outcomes.items() if episode[0] in wanted}
        result[part] = round(paired_runs.pass_at_1(kept), 4) if kept else None
    return result


def mean_gain(arms: Arms, names: list[str]) -> dict:
    """The runs' mean held-out gain over SFT; its interval resamples the families and the training seeds."""
    result = paired_runs.compare_replicates(arms.outcomes("sft"), [arms.outcomes(name) for name in names])
    return {
        "runs": names,
        "difference": round(result.difference, 4),
        "difference_95_families_and_seeds_resampled": [round(x, 4) for x in result.interval],
    }


def report(arms: Arms, plan: dict, complete: bool) -> None:
    parts = plan["held_out"]
    done = [name for name in HELD_OUT_ARMS if name in arms]
    against_sft = {
        name: compare_outcomes(arms.outcomes("sft"), arms.outcomes(name))
        for name in done
        if name != "sft" and "sft" in arms
    }
    seeds = [f"grpo-s{s}" for s in range(3) if f"grpo-s{s}" in arms]
    write(
        "learning",
        {
            "complete": complete,
            "start": "SmolLM2-135M-Instruct after bench_bands.py's SFT (oracle turns, train level 0, compact prompt)",
            "start_model": arms.start,
            "recipe": RECIPE
            + [f"steps={STEPS}", f"tasks: every train family's level 0, seeds {TRAIN_SEEDS}"],
            "recipe_search": recipe_search(arms, plan["val"]),
            "rollouts_per_grpo_run": ROLLOUTS,
            "evaluation": {
                "episodes": {part: len(ids) for part, ids in parts.items()},
                "samples_per_episode": 2,
                "decoding": f"temperature {TEMPERATURE} (the training temperature), top-p 1, 256 new tokens, "
                "compact prompt; hf policy seed 0 (the control: seed 1)",
            },
            "pass_at_1": {name: pass_by_part(arms.outcomes(name), parts) for name in done},
            "noise_floor_sft_vs_sft": against_sft.get("sft-control"),
            "against_sft": {k: v for k, v in against_sft.items() if k != "sft-control"},
            "grpo_mean_gain": mean_gain(arms, seeds) if "sft" in arms and seeds else None,
            "grpo_seeds_measured": len(seeds),
            # Evaluations: wall time with a rollout in flight; training runs: the sum of their steps.
            "seconds": {
                name: {k: v for k, v in arms.done[name].items() if k.endswith("seconds")} for name in done
            },
            # the arms landed before 2026-12-03 did not record it: AMD EPYCs, MKL_CBWR=AVX2 (README)
            "landed_on": {
                name: arms.done[name]["landed_on"] for name in done if "landed_on" in arms.done[name]
            },
            "per_step": {
                name: arms.done[name].get("per_step", [])
                for name in (
                    *(f"grpo-s{s}" for s in range(3)),
                    *(f"val-grpo-lr{lr}" for lr in LEARNING_RATES),
                )
                if name in arms
            },
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--report",
        action="store_true",
        help="only write learning.json again from the committed arms, with this code (a running bench "
        "writes it with the code it started with); trains and evaluates nothing",
    )
    if parser.parse_args().report:
        arms = Arms(json.loads(ARMS.read_text())["start"])
        done = all(name in arms for name in (*HELD_OUT_ARMS, *VAL_ARMS))
        report(arms, json.loads(PLAN.read_text()), complete=done)
        return
    pin_numerics()
    probe = numerics_probe()
    check_numerics(probe)
    sft_model()  # bench_bands' first two stages, once
    WORK.mkdir(parents=True, exist_ok=True)
    stages = Stages(WORK / "stages.json")
    arms = Arms(local_model_key(str(SFT_MODEL)), numerics={"probe": probe, "cpu": cpu()})
    # Fixed at the first start: families added later do not change a half-done comparison.
    if not PLAN.is_file():
        train, held = level0(families(ACME))
        plan = {
            "held_out": held_out_ids(train, held, per_train=2, per_held=8),
            "val": [i for f in train for i in first_ids(f, 1, lambda f, x: f.split_of(x) == "val")],
            "train_families": [f"acme/{f.name}" for f in train],
            "rft_instances": train_instances(train, ROLLOUTS),
        }
        write_plan(plan)
    plan = json.loads(PLAN.read_text())
    parts, refs = plan["held_out"], plan["train_families"]
    episodes = [i for part in parts.values() for i in part]

    def arm(name: str, make_model, seed: int = 0, on: list[str] = episodes, **extra) -> None:
        """Make the arm's model, evaluate it on `on`, keep both in the arms' file (unless it is there)."""
        if name in arms:
            print(f"{name}: evaluated before", flush=True)
            return
        print(whole_run(plan, arms), flush=True)
        model = make_model()
        run = evaluate(stages, name, model, on, seed)
        arms.land(name, run, **{k: f() for k, f in extra.items()})
        journal_of(run).unlink()  # what it journalled, the arms' file now keeps
        report(arms, plan, complete=False)

    def grpo_arm(name: str, lr: str, seed: int, on: list[str]) -> None:
        out = grpo_dir(lr, seed)
        arm(
            name,
            lambda: grpo(stages, lr, seed, refs),
            on=on,
            lr=lambda: lr,
            training_seconds=lambda: round(training_seconds(out), 1),
            per_step=lambda: per_step(out),
        )

    arm("sft", lambda: SFT_MODEL)
    arm("sft-control", lambda: SFT_MODEL, seed=1)
    arm("val-sft", lambda: SFT_MODEL, on=plan["val"])
    for lr in LEARNING_RATES:
        grpo_arm(f"val-grpo-lr{lr}", lr, 0, plan["val"])
    lr = chosen_lr(arms)
    print(f"recipe: optim.lr={lr}, chosen on val", flush=True)
    # RFT first (about 2 h with its evaluation, against 5 h for a GRPO run or more SFT): it is the arm a
    # fresh machine's session can land, its data being committed once sampled.
    arm(
        "rft",
        lambda: rft(stages, plan["rft_instances"], arms.start),
        sample_seconds=lambda: rft_sampling(plan)[1],
        training_seconds=lambda: round(training_seconds(WORK / "rft"), 1),
    )
    for seed in range(3):
        grpo_arm(f"grpo-s{seed}", lr, seed, episodes)
    arm(
        "more-sft",
        lambda: more_sft(stages, more_sft_epochs(plan, arms.done["grpo-s0"]["training_seconds"])),
        training_seconds=lambda: round(training_seconds(WORK / "more-sft"), 1),
    )
    report(arms, plan, complete=True)


if __name__ == "__main__":
    main()
