"""Warm start on this CPU: SmolLM2-135M before SFT, after SFT (and after SFT + GRPO) on held-out level-0 work.

    .venv/bin/python bench/bench_warmstart.py [--train-seeds 0-3] [--epochs 1] [--lr 1e-4] [--grpo-steps 10]
        [--grpo KEY=VALUE ...] [--skip-base]  -> bench/results/warmstart.json, learning-call-reward.json
    .venv/bin/python bench/bench_warmstart.py --variant NAME --grpo KEY=VALUE ...
        -> bench/results/learning-NAME.json: another GRPO run from the same SFT model, same evaluation

Stages, each the user's own command run as a whole process and timed:
1. data:  `egym sft-data` replays the oracle on the train-split level-0 instances of every
          train family (seeds --train-seeds).
2. sft:   `egym sft trainer/configs/sft-smollm2.yaml` on that data.
3. eval-*: `egym batch` with the hf policy on the same held-out level-0 episodes for each model:
          unseen seeds of the train families (instances whose split is test) and every held-out
          family (split test as a whole). tool_choice auto: the model decides whether to call.
GRPO (`--grpo-steps`, 10 by default) from the SFT model (trainer/configs/gym-cpu.yaml, full fine-tune, the same
train families at level 0, seeds 0-49 of the train split) and the same evaluation of its last checkpoint.

Reported per model and per part (unseen seeds, unseen families): pass rate and mean score with
Wilson 95 % intervals (the mean score's interval is the normal one), the share of assistant turns
with a tool call that was read and ran without error, and the share of episodes with at least one.
Every stage's result goes to .egym/bench-warmstart/stages.json as it lands, so a rerun goes on
where a crash stopped it (delete the folder to start over). The rollouts stay in
.egym/bench-warmstart/runs.db: `egym dashboard --store .egym/bench-warmstart/runs.db` shows them.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, write  # noqa: E402
from gym.batch import paired as paired_runs  # noqa: E402
from gym.calibrate import wilson_interval  # noqa: E402
from gym.dashboard import svg  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402
from gym.dashboard.pages.training import reward_chart  # noqa: E402
from gym.families import Family, families, generate  # noqa: E402
from gym.store import Store  # noqa: E402
from trainer.checkpoint import list_checkpoints  # noqa: E402

ACME = ROOT / "tasks" / "acme"
WORK = ROOT / ".egym" / "bench-warmstart"
EGYM = [str(ROOT / ".venv" / "bin" / "egym")]
SEARCH_SEEDS = range(200)
GRPO_SEEDS = "0-49"
EVAL_OPTIONS = ["-o", "seed=0", "-o", "max_new_tokens=256"]
# Where the SFT model sometimes wins: groups of 4 on 4 tasks a step, groups with no reward variance
# replaced once by fresh tasks, and a small reward for a call that runs next to the rubric's.
GRPO_OPTIONS = [
    "rollout.group_size=4",
    "rollout.tasks_per_step=4",
    "rollout.resample_rounds=1",
    "rollout.options.call_reward=0.1",
    "optim.lr=2e-5",
]


def level0(found: dict[str, Family]) -> tuple[list[Family], list[Family]]:
    """(train families, held-out families) that have a level 0."""
    with_l0 = [f for f in found.values() if 0 in f.levels]
    return [f for f in with_l0 if f.split == "train"], [f for f in with_l0 if f.split != "train"]


def first_ids(family: Family, count: int, keep) -> list[str]:
    """The ids of `family`'s first `count` distinct level-0 instances (seeds from 0) that `keep(family,
    instance)` accepts."""
    seen, ids = set(), []
    for seed in SEARCH_SEEDS:
        instance = generate(family, 0, seed)
        digest = instance.digest()
        if digest not in seen and keep(family, instance):
            seen.add(digest)
            ids.append(f"{family.world}/{family.instance_id(0, seed)}")
        if len(ids) == count:
            break
    return ids


def held_out_ids(
    train: list[Family], held: list[Family], per_train: int, per_held: int
) -> dict[str, list[str]]:
    """Distinct held-out level-0 instance ids: the first test-split seeds of each train family, the
    first distinct seeds of each held-out family. The same ids for every model evaluated."""
    return {
        "unseen_seeds": [
            i for f in train for i in first_ids(f, per_train, lambda f, x: f.split_of(x) == "test")
        ],
        "unseen_families": [i for f in held for i in first_ids(f, per_held, lambda f, x: True)],
    }


class Stages:
    """stages.json: each finished stage's result, written as soon as it lands."""

    def __init__(self, path: Path):
        self.path = path
        self.done = json.loads(path.read_text()) if path.is_file() else {}

    def run(self, name: str, argv: list[str], then=None) -> dict:
        if name in self.done:
            print(f"{name}: done before ({self.done[name]['seconds']:.0f} s)", flush=True)
            return self.done[name]
        print(f"{name}: {' '.join(argv)}", flush=True)
        started = time.perf_counter()
        code = subprocess.run(argv, cwd=ROOT).returncode
        seconds = time.perf_counter() - started
        if code != 0:  # not journalled: the next run does it again
            sys.exit(f"{name} failed (exit {code}); the stages before it are kept, rerun to go on")
        result = {"seconds": round(seconds, 1), "exit_code": code}
        if then is not None:
            result |= then()
        self.done[name] = result
        self.path.write_text(json.dumps(self.done, indent=1) + "\n")
        return result


def kept_record(kept: Path) -> dict | None:
    """What the stage that made the dataset committed under `kept` recorded, or None until it is made."""
    record = kept / "stage.json"
    return json.loads(record.read_text()) if record.is_file() else None


def kept_dataset(stages: Stages, name: str, argv: list[str], data: Path, kept: Path, then=None) -> dict:
    """A stage making an SFT dataset folder (`egym sft-data ... --out data`) whose data is committed:
    restored into `data` from `kept` (data.jsonl gzipped, manifest.json, stage.json) when a session
    made it before, else made and kept. A fresh checkout lacks .egym, and making the data again need
    not give the same bytes (the oracle's turns hold what the servers answered, post ids among it;
    sampled rollouts differ with the machine), so every session trains on these very bytes."""
    made = kept_record(kept)
    if made is not None:
        if not (data / "data.jsonl").is_file():
            data.mkdir(parents=True, exist_ok=True)
            (data / "data.jsonl").write_bytes(gzip.decompress((kept / "data.jsonl.gz").read_bytes()))
            shutil.copyfile(kept / "manifest.json", data / "manifest.json")
        return made

    def counted() -> dict:
        return {"examples": sum(1 for _ in (data / "data.jsonl").open()), **(then() if then else {})}

    made = stages.run(name, argv, then=counted)
    raw = (data / "data.jsonl").read_bytes()
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "data.jsonl.gz").write_bytes(gzip.compress(raw, mtime=0))
    shutil.copyfile(data / "manifest.json", kept / "manifest.json")
    made = {**made, "sha256": hashlib.sha256(raw).hexdigest()}
    # Written last: a stop before it makes the data again.
    (kept / "stage.json").write_text(json.dumps(made, indent=1) + "\n")
    return made


def busy_seconds(rows) -> float:
    """Wall time with at least one of `rows` in flight (the union of their start-to-finish spans): how long
    a stored run took across the sessions it was resumed in, without the gaps between them (a stage's own
    `seconds` count only its last invocation)."""
    total, end = 0.0, None
    for start, finish in sorted(
        (r.started_at, r.finished_at) for r in rows if r.started_at and r.finished_at
    ):
        if end is None or start >= end:
            total += (finish - start).total_seconds()
        elif finish > end:
            total += (finish - end).total_seconds()
        end = finish if end is None else max(end, finish)
    return round(total, 1)


def _turns(row) -> tuple[int, int, int]:
    """(assistant turns, turns with a working tool call, well-formed calls) of one rollout."""
    trajectory = row.trajectory_model()
    if trajectory is None:
        return 0, 0, 0
    formed = sum(call.error is None for call in trajectory.tool_calls())
    return len(trajectory.steps), trajectory.working_call_turns, formed


def score_rows(rows) -> dict:
    """Pass rate, mean score (with 95 % intervals) and tool-call validity of finished rollouts."""
    done = [r for r in rows if r.status == "done" and r.reward is not None]
    n = len(done)
    passes = sum(bool(r.passed) for r in done)
    scores = [max(0.0, r.reward) for r in done]
    mean = statistics.fmean(scores) if scores else 0.0
    half = 1.96 * statistics.stdev(scores) / math.sqrt(n) if n > 1 else 0.0
    turns = [_turns(r) for r in done]
    all_turns, good_turns = sum(t[0] for t in turns), sum(t[1] for t in turns)
    low, high = wilson_interval(passes, n) if n else (0.0, 0.0)
    return {
        "episodes": n,
        "failed": len(rows) - n,
        "pass_rate": round(passes / n, 4) if n else None,
        "pass_rate_95": [round(low, 4), round(high, 4)],
        "mean_score": round(mean, 4),
        "mean_score_95": [round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4)],
        "turns_with_valid_executed_call": round(good_turns / all_turns, 4) if all_turns else None,
        "episodes_with_valid_executed_call": round(sum(t[1] > 0 for t in turns) / n, 4) if n else None,
        # a call that was read (right format, a known tool, JSON arguments), whether or not it then failed
        "episodes_with_well_formed_call": round(sum(t[2] > 0 for t in turns) / n, 4) if n else None,
    }


def evaluate(stages: Stages, name: str, model: str, parts: dict[str, list[str]], concurrency: int) -> dict:
    store_path = WORK / "runs.db"
    ids = [i for part in parts.values() for i in part]

    def scores() -> dict:
        store = Store(str(store_path))
        rows = store.list_rollouts(f"warmstart-{name}")
        by_task = {r.task: r for r in rows}
        out = {
            part: score_rows([by_task[i] for i in part_ids if i in by_task])
            for part, part_ids in parts.items()
        }
        out["all"] = score_rows(rows)
        store.close()
        return out

    argv = [*EGYM, "batch", *ids, "--policy", "hf", "--model", model, *EVAL_OPTIONS]
    argv += ["--concurrency", str(concurrency), "--run", f"warmstart-{name}", "--store", str(store_path)]
    timing = stages.run(f"eval-{name}", argv)
    return {"seconds": timing["seconds"], "exit_code": timing["exit_code"], **scores()}


def compare_runs(store_path: Path, before: str, after: str) -> dict:
    """Two stored runs on the same held-out episodes, episode by episode (gym.batch.paired): pass@1 of
    each, how many each alone passed, the exact McNemar p-value, and the difference with families resampled."""
    store = Store(str(store_path))
    runs = [paired_runs.outcomes(store.list_rollouts(run)) for run in (before, after)]
    store.close()
    return compare_outcomes(*runs)


def compare_outcomes(before: dict[tuple[str, int], bool], after: dict[tuple[str, int], bool]) -> dict:
    """compare_runs over two runs' outcomes ((task, sample) -> passed, gym.batch.paired.outcomes)."""
    result = paired_runs.compare(before, after)
    if result is None:
        return {"episodes": 0}
    return {
        "tasks": result.tasks,
        "episodes": result.episodes,
        "pass_before": round(result.pass_a, 4),
        "pass_after": round(result.pass_b, 4),
        "both_passed": result.both,
        "gained": result.only_b,
        "lost": result.only_a,
        "mcnemar_p": round(result.mcnemar_p, 4),
        "difference": round(result.difference, 4),
        "difference_95_families_resampled": [round(x, 4) for x in result.interval],
    }


def paired(before: str, after: str) -> dict:
    return compare_runs(WORK / "runs.db", f"warmstart-{before}", f"warmstart-{after}")


STEP_KEYS = (
    "step",
    "reward_mean",
    "rubric_reward_mean",
    "pass_rate",
    "call_rate",
    "groups",
    "zero_variance_share",
    "rollouts",
    "time_rollout",
    "rollout_play_s",
    "rollout_grade_s",
    "time_update",
    "time_sync",
    "time_step",
)


def _grpo_summary(out: Path) -> list[dict]:
    """Per step: rewards, zero-variance share and the time split, from the run's metrics.jsonl."""
    rows = [step.model_dump() for step in read_metrics(out / "metrics.jsonl").steps]
    return [{k: r[k] for k in STEP_KEYS if k in r} for r in rows if r["reward_mean"] is not None]


def write_learning(
    report: str,
    grpo_dir: Path,
    stage: dict,
    before: dict,
    after: dict,
    parts: dict,
    options: list[str],
    paired_episodes: dict,
) -> None:
    """learning[-VARIANT].json: the SFT model before GRPO against its last checkpoint on the same
    held-out episodes (as totals and episode by episode), the per-step curve and time split, and the
    reward curve as an SVG."""
    metrics = read_metrics(grpo_dir / "metrics.jsonl")
    curve = RESULTS / f"{report}-reward.svg"
    curve.write_text(svg.standalone(reward_chart(metrics)))
    steps = stage.get("metrics", [])
    write(
        report,
        {
            "model": "SmolLM2-135M-Instruct after the SFT warm start of warmstart.json, full fine-tune",
            "config": "trainer/configs/gym-cpu.yaml",
            "overrides": ["model.lora.enabled=false", *options],
            "steps": len(steps),
            "seconds": stage["seconds"],
            "train_tasks": "level 0 of every train family, seeds 0-49, train split",
            "held_out": {part: len(ids) for part, ids in parts.items()},
            "eval_policy": "hf, temperature 0.7, seed 0, 256 new tokens per turn",
            "before": before,
            "after": after,
            "paired": paired_episodes,
            "per_step": steps,
            "reward_curve": str(curve.relative_to(ROOT)),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-seeds", default="0-3", help="Seeds of the SFT data (train split only).")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--per-train-family", type=int, default=2, help="Unseen seeds per train family.")
    parser.add_argument("--per-held-family", type=int, default=8, help="Instances per held-out family.")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--grpo-steps",
        type=int,
        default=10,
        help="Then GRPO from the SFT model for this many steps, and evaluate it (0: skip).",
    )
    parser.add_argument(
        "--grpo",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A trainer/configs/gym-cpu.yaml override for the GRPO run (repeatable).",
    )
    parser.add_argument(
        "--skip-base", action="store_true", help="Do not evaluate the model before SFT (it takes longest)."
    )
    parser.add_argument(
        "--variant",
        metavar="NAME",
        help="Only a further GRPO run (with its own --grpo overrides) from the same SFT model, its own "
        "folder and stages, reported in learning-NAME.json; warmstart.json is left as it is.",
    )
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    stages = Stages(WORK / "stages.json")

    train, held = level0(families(ACME))
    parts = held_out_ids(train, held, args.per_train_family, args.per_held_family)
    data, sft = WORK / "data", WORK / "sft"
    refs = [f"acme/{f.name}" for f in train]
    made = stages.run(
        "data",
        [*EGYM, "sft-data", *refs, "--levels", "0", "--seeds", args.train_seeds, "--out", str(data)],
        then=lambda: {"examples": sum(1 for _ in (data / "data.jsonl").open())},
    )
    trained = stages.run(
        "sft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={data}", f"output_dir={sft}"]
        + [f"epochs={args.epochs}", f"lr={args.lr}"],
        then=lambda: {"final_loss": read_metrics(sft / "metrics.jsonl").steps[-1].model_dump()["loss"]},
    )
    models = {} if args.skip_base or args.variant else {"before_sft": "smollm2"}
    models["after_sft"] = str(sft / "model")
    grpo_name = f"grpo-{args.variant}" if args.variant else "grpo"
    if args.grpo_steps:
        grpo = WORK / grpo_name
        paths = ",".join(f"{ref}@{GRPO_SEEDS}" for ref in refs)
        stages.run(
            grpo_name,
            [*EGYM, "train", "trainer/configs/gym-cpu.yaml", f"model.path={sft / 'model'}"]
            + ["model.lora.enabled=false", f"tasks.paths=[{paths}]", "tasks.include=['*-l0-*']"]
            + [f"steps={args.grpo_steps}", f"checkpoint.interval={args.grpo_steps}", f"output_dir={grpo}"]
            + GRPO_OPTIONS
            + args.grpo,
            then=lambda: {"steps": args.grpo_steps, "metrics": _grpo_summary(grpo)},
        )
        models[f"after_sft_{grpo_name}"] = str(list_checkpoints(grpo / "checkpoints")[-1] / "model")
    results = {name: evaluate(stages, name, model, parts, args.concurrency) for name, model in models.items()}
    if args.grpo_steps:
        # learning.json is bench_learning.py's; the default run is the one with a call reward
        report = f"learning-{args.variant}" if args.variant else "learning-call-reward"
        before, after = results["after_sft"], results[f"after_sft_{grpo_name}"]
        options = GRPO_OPTIONS + args.grpo
        write_learning(
            report,
            WORK / grpo_name,
            stages.done[grpo_name],
            before,
            after,
            parts,
            options,
            paired("after_sft", f"after_sft_{grpo_name}"),
        )
    if args.variant:
        return
    manifest = json.loads((data / "manifest.json").read_text())
    write(
        "warmstart",
        {
            "model": "SmolLM2-135M-Instruct (bundled GGUF Q4_1, dequantised to float32)",
            "sft_data": {
                "families": len(train),
                "train_instances": len(manifest["splits"]),
                "seeds": args.train_seeds,
                "level": 0,
                **made,
            },
            "sft": {
                "config": "trainer/configs/sft-smollm2.yaml",
                "epochs": args.epochs,
                "lr": args.lr,
                **trained,
            },
            "held_out": {part: len(ids) for part, ids in parts.items()},
            "held_out_families": [f.name for f in held],
            "eval_policy": "hf, tool_choice auto, temperature from the model (0.7 default), seed 0, 256 new tokens per turn",
            "results": results,
        },
    )


if __name__ == "__main__":
    main()
