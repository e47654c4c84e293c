"""The library's difficulty bands for SmolLM2 after the SFT warm start: every train family level.

    nohup .venv/bin/python bench/bench_bands.py > .egym/bench-bands.log 2>&1 &
        -> tasks/acme/families/bands.yaml (one band per level under the SFT model's key),
           bench/results/bands.json (the distribution, samples, time)

Stages, each the user's own command run as a whole process, journalled in .egym/bench-bands/stages.json
so a rerun goes on where a crash or a stop left it (the calibration itself resumes its stored run):
1. data: `egym sft-data` replays the oracle on the train-split level-0 instances of every train
         family (seeds 0-3), with the compact system prompt SmolLM2 is trained and measured with.
2. sft:  `egym sft trainer/configs/sft-smollm2.yaml` on that data, one epoch (warmstart.json's recipe).
3. calibrate: `egym calibrate <every train family> --split train --seeds 0-11 -k 1` with the hf policy on the
         SFT model: one rollout per distinct train instance, 6-12 per family level, pooled per level
         (a band is written from 6: 12 levels have fewer than 8 distinct train instances in these seeds).
Held-out families (split test as a whole) have no train instances, so they get no band: the
curriculum never samples them.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_warmstart import ACME, EGYM, Stages, busy_seconds, level0  # noqa: E402
from bench.common import write  # noqa: E402
from gym.calibrate import Score, calibrate_scores, calibration_units  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402
from gym.families import families  # noqa: E402
from gym.store import Store  # noqa: E402

WORK = ROOT / ".egym" / "bench-bands"
RUN = "bands-smollm2-sft"
HARNESS = ["-H", "prompt=compact"]
POLICY_OPTIONS = ["-o", "seed=0", "-o", "max_new_tokens=256"]


def distribution(rows: list, refs: list[str], seeds: str) -> dict:
    """Each train family level's pass rate and band from the stored calibration run's `rows`."""
    from gym.cli.options import select_tasks

    tasks = select_tasks(refs, seeds=seeds, split="train")
    levels = {}
    for unit, unit_tasks in calibration_units(tasks).items():
        keys = {t.key for t in unit_tasks}
        scores = [
            Score(r.reward, bool(r.incomplete))
            for r in rows
            if r.task in keys and r.status == "done" and r.reward is not None
        ]
        cal = calibrate_scores(unit, scores, unit_tasks[0].pass_threshold)
        levels[unit] = {
            "samples": cal.samples,
            "passes": cal.passes,
            "interval": [round(cal.low, 3), round(cal.high, 3)],
            "band": cal.band,
            "confident": cal.confident,
        }
    bands = collections.Counter(level["band"] or "unmeasured" for level in levels.values())
    return {
        "levels": len(levels),
        "bands": dict(sorted(bands.items())),
        "confident": sum(level["confident"] for level in levels.values()),
        "written": sum(level["samples"] >= 6 and level["band"] is not None for level in levels.values()),
        "rollouts": len(rows),
        "per_level": levels,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-11", help="Family seeds to calibrate on (train split only).")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    stages = Stages(WORK / "stages.json")
    found = families(ACME)
    train, _ = level0(found)
    refs = [f"acme/{name}" for name, family in sorted(found.items()) if family.split == "train"]
    data, sft, store = WORK / "data", WORK / "sft", WORK / "runs.db"
    made = stages.run(
        "data",
        [*EGYM, "sft-data", *[f"acme/{f.name}" for f in train], "--levels", "0", "--seeds", "0-3"]
        + ["--out", str(data), "--store", str(store), *HARNESS],
        then=lambda: {"examples": sum(1 for _ in (data / "data.jsonl").open())},
    )
    trained = stages.run(
        "sft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={data}", f"output_dir={sft}"]
        + ["epochs=1", "lr=1e-4", "prompt=compact"],
        then=lambda: {"final_loss": read_metrics(sft / "metrics.jsonl").steps[-1].model_dump()["loss"]},
    )
    command = [
        *EGYM,
        "calibrate",
        *refs,
        "--split",
        "train",
        "--seeds",
        args.seeds,
        "-k",
        "1",
        "--min-samples",
        "6",
    ]
    command += ["--policy", "hf", "--model", str(sft / "model"), *POLICY_OPTIONS, *HARNESS]
    command += ["--concurrency", str(args.concurrency), "--run", RUN, "--store", str(store)]
    calibrated = stages.run("calibrate", command)
    runs = Store(str(store))
    rows = runs.list_rollouts(RUN)
    runs.close()
    write(
        "bands",
        {
            "model": "SmolLM2-135M-Instruct after one SFT epoch on oracle turns of train level 0 (seeds 0-3)",
            "harness": "prompt=compact",
            "commands": {
                "data": "egym sft-data <train families> --levels 0 --seeds 0-3 -H prompt=compact",
                "sft": "egym sft trainer/configs/sft-smollm2.yaml epochs=1 lr=1e-4 prompt=compact",
                "calibrate": f"egym calibrate <train families> --split train --seeds {args.seeds} -k 1 --min-samples 6 -p hf "
                "-m <sft model> -o seed=0 -o max_new_tokens=256 -H prompt=compact",
            },
            "sft_data": made,
            "sft": trained,
            # Across every session the run was resumed in (the stage's own seconds are its last one's).
            "calibrate_seconds": busy_seconds(rows),
            "calibrate_exit_code": calibrated["exit_code"],
            **distribution(rows, refs, args.seeds),
        },
    )


if __name__ == "__main__":
    main()
