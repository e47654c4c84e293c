"""GRPO's rollout phase on this machine: today's settings against the throughput settings, in one run.

    .venv/bin/python bench/bench_learning_throughput.py [--model FOLDER] [--instances 12]
        [--concurrency 4] [--max-turns 4] [--max-new-tokens 128]  -> bench/results/learning-throughput.json
    .venv/bin/python bench/bench_learning_throughput.py --smoke --out /tmp/t.json   (a check, not figures)

What is timed is the trainer's own rollout phase: GymRolloutSource.collect with the hf sampler over
the model as `egym train` loads it (trainer/configs/gym-cpu.yaml: LoRA, temperature 1, groups of 4),
so each rollout is a sandbox, the harness with the model, and the rubric's grade. Two settings:
- before: gym-cpu.yaml as it is (rollout.concurrency 2, the full prompt, 6 turns, 256 new tokens);
- after:  rollout.concurrency N, `prompt: compact`, and level-0 caps on turns and new tokens
          (rollout.options.harness.limits_by_level).
The instances are fixed: the first train-split level-0 seed of the first `--instances` train families
(by name). They are played in rounds of `tasks_per_step` instances (one training step's groups), each
round by both settings with the same seeds, in alternating order (before-after, after-before, ...), so
drift on a shared machine hits both; a warm-up rollout per set of apps comes first, uncounted (the
model's first forward pass and each app's tool list are paid once per process). The engine forgets
its cached prefixes before each setting's round, as a weight sync does after every step. Reported per
setting: rollouts/min and generated tokens/s over the setting's own wall time, prompt tokens per turn,
the prefix-cache hit rate, pass rate and turns; and the ratios after/before. The JSON is rewritten
after every round (`complete: false` until the end).

The model defaults to the warm-start bench's SFT model (.egym/bench-warmstart/sft/model) when it
exists, else the bundled SmolLM2. A model fine-tuned on full prompts plays compact prompts off its
training distribution: its turns may run longer or shorter than they would after SFT on compact data.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, machine  # noqa: E402
from gym.families import families, generate  # noqa: E402
from gym.task_refs import resolve  # noqa: E402
from trainer.config import TrainConfig, load_config  # noqa: E402
from trainer.model import load_policy  # noqa: E402
from trainer.rollouts.gym_source import GymRolloutSource  # noqa: E402
from trainer.samplers.base import build_sampler  # noqa: E402
from trainer.samples import Group, Rollout  # noqa: E402
from trainer.seeding import derive_seed  # noqa: E402

CONFIG = ROOT / "trainer" / "configs" / "gym-cpu.yaml"
ACME = ROOT / "tasks" / "acme"
SFT_MODEL = ROOT / ".egym" / "bench-warmstart" / "sft" / "model"
SEARCH_SEEDS = range(50)


def instances(count: int) -> list[Any]:
    """The first train-split level-0 instance of each of the first `count` train families, by name."""
    ids, found = [], families(ACME)
    for family in (found[name] for name in sorted(found)):
        if family.split != "train" or 0 not in family.levels:
            continue
        seed = next(s for s in SEARCH_SEEDS if family.split_of(generate(family, 0, s)) == "train")
        ids.append(f"{family.world}/{family.instance_id(0, seed)}")
        if len(ids) == count:
            break
    return resolve(ids)


def settings(args: argparse.Namespace) -> dict[str, TrainConfig]:
    """The two trainer configs: gym-cpu.yaml, and the same with the throughput settings."""
    common = [
        f"model.path={args.model}",
        "rollout.options.keep_rollouts=false",  # the run store is not this bench's business
        "rollout.options.run_id=bench-throughput",
    ]
    if args.smoke:
        common += ["rollout.group_size=2", "rollout.options.harness.max_turns=1", "sampling.max_new_tokens=8"]
    level0 = "rollout.options.harness.limits_by_level.0"
    after = [
        f"rollout.concurrency={args.concurrency}",
        "rollout.options.harness.prompt=compact",
        f"{level0}.max_turns={args.max_turns}",
        f"{level0}.max_new_tokens={args.max_new_tokens}",
    ]
    return {"before": load_config(CONFIG, common), "after": load_config(CONFIG, common + after)}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One setting's figures over its runs so far."""
    rollouts = [r for run in runs for r in run["rollouts"]]
    seconds = sum(run["seconds"] for run in runs)
    graded = [r for r in rollouts if not r["incomplete"]]
    generated = sum(r["completion_tokens"] for r in rollouts)
    prompt = sum(r["prompt_tokens"] for r in rollouts)
    cached = [r for r in rollouts if r["cached_tokens"] is not None]
    cached_prompt = sum(r["prompt_tokens"] for r in cached)
    turns = sum(r["turns"] for r in rollouts)
    return {
        "rollouts": len(rollouts),
        "seconds": round(seconds, 2),
        "rollouts_per_min": round(len(rollouts) / seconds * 60, 3) if seconds else None,
        "generated_tokens": generated,
        "generated_tokens_per_s": round(generated / seconds, 3) if seconds else None,
        "prompt_tokens_per_turn": round(prompt / turns, 1) if turns else None,
        "generated_tokens_per_rollout": round(generated / len(rollouts), 1) if rollouts else None,
        "turns_per_rollout": round(turns / len(rollouts), 2) if rollouts else None,
        "prefix_cache_hit_rate": (
            round(sum(r["cached_tokens"] for r in cached) / cached_prompt, 4) if cached_prompt else None
        ),
        "pass_rate": round(sum(bool(r["passed"]) for r in graded) / len(graded), 4) if graded else None,
        "reward_mean": round(sum(r["reward"] for r in graded) / len(graded), 4) if graded else None,
        "incomplete": len(rollouts) - len(graded),
    }


def rollout_row(rollout: Rollout) -> dict[str, Any]:
    info = rollout.info
    return {
        "reward": rollout.reward,
        "passed": rollout.passed,
        "incomplete": rollout.incomplete,
        "turns": info.get("turns", 0),
        "stop_reason": info.get("stop_reason"),
        "completion_tokens": info.get("completion_tokens", 0),
        "prompt_tokens": info.get("prompt_tokens", 0),
        "cached_tokens": info.get("cached_tokens"),
        "error": info.get("error"),
    }


def play(
    source: GymRolloutSource,
    sampler: Any,
    tasks: list[Any],
    seeds: list[int],
    group_size: int,
) -> dict[str, Any]:
    """One setting's groups of `tasks`, timed; the engine's cached prefixes are dropped first."""
    sampler.engine.reload()  # a cold prefix cache, as after every step's weight sync
    total, done = len(tasks) * group_size, [0]

    def finished(rollout: Rollout) -> None:
        done[0] += 1
        print(f"  {done[0]}/{total} rollouts", end="\r", flush=True)

    started = time.perf_counter()
    groups: list[Group] = source.collect(
        sampler, tasks, group_size=group_size, seeds=seeds, on_rollout=finished
    )
    seconds = time.perf_counter() - started
    return {
        "tasks": [t.key for t in tasks],
        "seconds": round(seconds, 3),
        "rollouts": [rollout_row(r) for g in groups for r in g.rollouts],
    }


def setting_record(config: TrainConfig) -> dict[str, Any]:
    rollout = config.rollout
    return {
        "concurrency": rollout.concurrency,
        "group_size": rollout.group_size,
        "harness": rollout.options.get("harness", {}),
        "sampling": config.sampling.model_dump(),
        "sampler_max_batch": config.sampler.max_batch,
    }


def write_result(
    args: argparse.Namespace,
    tasks: list[Any],
    configs: dict[str, TrainConfig],
    runs: dict[str, list[dict[str, Any]]],
    *,
    complete: bool,
) -> dict[str, Any]:
    figures = {name: summarize(done) for name, done in runs.items()}
    before, after = figures["before"], figures["after"]
    ratio = {
        key: round(after[key] / before[key], 3) if after[key] and before[key] else None
        for key in ("rollouts_per_min", "generated_tokens_per_s")
    }
    result = {
        "machine": machine(),
        "complete": complete,
        "smoke": args.smoke,
        "model": args.model,
        "config": str(CONFIG.relative_to(ROOT)),
        "instances": [t.key for t in tasks],
        "settings": {name: setting_record(config) for name, config in configs.items()},
        **figures,
        "ratio_after_over_before": ratio,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(SFT_MODEL) if SFT_MODEL.is_dir() else "smollm2")
    parser.add_argument("--instances", type=int, default=12, help="Train-split level-0 instances.")
    parser.add_argument("--concurrency", type=int, default=4, help="rollout.concurrency of `after`.")
    parser.add_argument("--max-turns", type=int, default=4, help="Level-0 turn cap of `after`.")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="Level-0 new-token cap of `after`.")
    parser.add_argument("--smoke", action="store_true", help="2 instances, groups of 2, 1 turn, 8 tokens.")
    parser.add_argument("--out", type=Path, default=RESULTS / "learning-throughput.json")
    args = parser.parse_args()
    if args.smoke:
        args.instances, args.concurrency, args.max_turns, args.max_new_tokens = 2, 2, 1, 8

    configs = settings(args)
    first = configs["before"]
    tasks = instances(args.instances)
    per_round = first.rollout.tasks_per_step
    rounds = [tasks[i : i + per_round] for i in range(0, len(tasks), per_round)]
    print(f"model {args.model}; {len(tasks)} instances in {len(rounds)} rounds", flush=True)
    model, tokenizer = load_policy(first.model, first.seed)
    sampler = build_sampler(first, tokenizer, model)
    sources = {name: GymRolloutSource(config, tokenizer) for name, config in configs.items()}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
    # Paid once per process, not per setting: the first forward pass, each app's MCP tool list.
    warmup = list({tuple(t.apps): t for t in tasks}.values())
    print(f"warm-up (not counted): {len(warmup)} rollouts, one per set of apps", flush=True)
    play(sources["before"], sampler, warmup, list(range(len(warmup))), group_size=1)

    for index, group_tasks in enumerate(rounds):
        seeds = [derive_seed(first.seed, "bench-throughput", index, i) for i in range(len(group_tasks))]
        for name in ["before", "after"] if index % 2 == 0 else ["after", "before"]:
            run = play(sources[name], sampler, group_tasks, seeds, configs[name].rollout.group_size)
            runs[name].append({"round": index, **run})
            now = summarize(runs[name])
            print(
                f"round {index + 1}/{len(rounds)} {name:6}: {len(run['rollouts'])} rollouts in "
                f"{run['seconds']:.1f} s; so far {now['rollouts_per_min']} rollouts/min, "
                f"{now['generated_tokens_per_s']} tokens/s",
                flush=True,
            )
            write_result(args, tasks, configs, runs, complete=False)
    result = write_result(args, tasks, configs, runs, complete=True)
    print(f"after/before: {result['ratio_after_over_before']} -> {args.out}")


if __name__ == "__main__":
    main()
