"""The library's difficulty bands for SmolLM2 after the SFT warm start: every train family level.

    nohup .venv/bin/python bench/bench_bands.py > .egym/bench-bands.log 2>&1 &
        -> tasks/acme/families/bands.yaml (one band per level under the SFT model's key),
           bench/results/bands.json (the distribution, samples, time)

Stages, each the user's own command run as a whole process, journalled in .egym/bench-bands/stages.json
so a rerun goes on where a crash or a stop left it (the calibration itself resumes its stored run):
1. data: `egym sft-data` replays the oracle on the train-split level-0 instances of every train
         family (seeds 0-3), with the compact system prompt SmolLM2 is trained and measured with. The
         data is committed (bench/results/bands-sft-data/) and later sessions restore it.
2. sft:  `egym sft trainer/configs/sft-smollm2.yaml` on that data, one epoch (warmstart.json's recipe).
3. calibrate: `egym calibrate <instances> -k 1 --min-samples 6` with the hf policy on the SFT model,
         one family at a time, in two rounds over the family's train instances among seeds 0-11
         (`rounds`): first each level's first 6, then all of them (6-12 a level) for the levels
         with a pass among their first 6 (before this rule, the first three families sampled every
         instance, or in budget-actuals some: those outcomes are kept). Rollouts are pooled per level.
         Each family's bands land in families/bands.yaml and its rollouts' outcomes in
         bench/results/bands-rollouts.jsonl as soon as it is done; both are committed, so a later session
         (a fresh checkout: .egym is gone) trains again on the same data and goes on with the next
         family. The SFT is deterministic on one CPU, not across CPUs (another machine's kernels
         gave other weights: bench.common.PINNED_NUMERICS now pins them), and the journal names the
         model's key (its weights' fingerprint): a rerun whose SFT model differs stops instead of
         pooling two models' rollouts.
Held-out families (split test as a whole) have no train instances, so they get no band: the
curriculum never samples them. bands.json is rewritten after every family (`complete` says whether
every train family is in).
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_warmstart import ACME, EGYM, Stages, busy_seconds, kept_dataset, level0  # noqa: E402
from bench.common import pin_numerics, write  # noqa: E402
from gym.calibrate import Score, calibrate_scores, calibration_units  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402
from gym.families import INSTANCE_ID, families  # noqa: E402
from gym.models.identity import local_model_key  # noqa: E402
from gym.store import Store  # noqa: E402

WORK = ROOT / ".egym" / "bench-bands"
JOURNAL = ROOT / "bench" / "results" / "bands-rollouts.jsonl"
SFT_DATA = ROOT / "bench" / "results" / "bands-sft-data"  # committed: every session trains the same model
RUN = "bands-smollm2-sft"
SFT = WORK / "sft"  # the SFT run; its model is SFT / "model"
HARNESS = ["-H", "prompt=compact"]
POLICY_OPTIONS = ["-o", "seed=0", "-o", "max_new_tokens=256"]
# Instances per level before the second round (`rounds`); also the fewest a band is written from.
FIRST_ROUND = 6


@dataclass(frozen=True)
class Outcome:
    """One calibration rollout as the journal keeps it: what the band and the time are computed from."""

    family: str
    model: str
    task: str
    status: str
    reward: float | None
    incomplete: bool
    started_at: dt.datetime | None
    finished_at: dt.datetime | None

    @classmethod
    def of(cls, family: str, model: str, row) -> Outcome:
        return cls(
            family,
            model,
            row.task,
            str(row.status),
            row.reward,
            bool(row.incomplete),
            row.started_at,
            row.finished_at,
        )

    @classmethod
    def parse(cls, line: str) -> Outcome:
        entry = json.loads(line)
        for moment in ("started_at", "finished_at"):
            entry[moment] = dt.datetime.fromisoformat(entry[moment]) if entry[moment] else None
        return cls(**entry)

    def line(self) -> str:
        entry = dict(self.__dict__)
        for moment in ("started_at", "finished_at"):
            entry[moment] = entry[moment].isoformat() if entry[moment] else None
        return json.dumps(entry)


def journal() -> list[Outcome]:
    """Every calibrated family's rollouts, in the order the families landed."""
    if not JOURNAL.is_file():
        return []
    return [Outcome.parse(line) for line in JOURNAL.read_text().splitlines() if line.strip()]


def level_instances(ref: str, seeds: str) -> dict[int, list[str]]:
    """A family's train instances among `seeds`, per level, in seed order."""
    from gym.cli.options import select_tasks

    found = collections.defaultdict(list)
    for task in select_tasks([ref], seeds=seeds, split="train"):
        match = INSTANCE_ID.match(task.key.partition("/")[2])
        found[int(match["level"])].append((int(match["seed"]), task.key))
    return {level: [key for _, key in sorted(pairs)] for level, pairs in sorted(found.items())}


def rounds(levels: dict[int, list[str]], rows: list) -> tuple[list[str], list[str]]:
    """The instances of the first round, and of the second given the run's `rows` so far.

    First: each level's first FIRST_ROUND instances, and any other already done in this run (an
    earlier design sampled them; their outcomes are kept, not thrown away). Second: every instance
    of the levels with a pass among their done rollouts, and nothing for the others: 0 passes in 6
    or 12 is the same band (too-hard) and neither interval is confident (that takes about 70), while
    a level with a pass can move between too-hard, hard and target with more samples."""
    done = {row.task for row in rows if row.status == "done"}
    first = [key for keys in levels.values() for i, key in enumerate(keys) if i < FIRST_ROUND or key in done]
    passed = {row.task for row in rows if row.status == "done" and row.passed}
    second = [key for keys in levels.values() if passed & set(keys) for key in keys]
    return first, second


def journal_of(key: str) -> list[Outcome]:
    """The journal's outcomes, all of the model `key`; else stop (the SFT stage did not reproduce)."""
    outcomes = journal()
    others = sorted({o.model for o in outcomes} - {key})
    if others:
        sys.exit(
            f"{JOURNAL.relative_to(ROOT)} holds rollouts of {', '.join(others)}, not of this SFT model {key}: "
            "the SFT stage did not reproduce; move the journal aside to calibrate from scratch"
        )
    return outcomes


def calibrate_families(
    refs: list[str], seeds: str, concurrency: int, model: Path, key: str, store: Path
) -> Iterator[list[Outcome]]:
    """Calibrate each family not in the journal yet, by `egym calibrate` in rounds (see `rounds`);
    after each family, every outcome so far. `key` is `model`'s identity (hashing it reads every weight)."""
    outcomes = journal_of(key)
    done = {o.family for o in outcomes}
    for number, ref in enumerate(refs, 1):
        if ref in done:
            continue
        run = f"{RUN}-{ref.split('/')[-1]}"
        levels = level_instances(ref, seeds)
        asked = set()
        for round_number in (1, 2):
            instances = rounds(levels, stored_rows(store, run))[round_number - 1]
            asked.update(instances)
            if not instances:
                continue
            command = [*EGYM, "calibrate", *instances, "-k", "1", "--min-samples", str(FIRST_ROUND)]
            command += ["--policy", "hf", "--model", str(model), *POLICY_OPTIONS, *HARNESS]
            command += ["--concurrency", str(concurrency), "--run", run, "--store", str(store)]
            print(
                f"calibrate {number}/{len(refs)} ({len(done)} done), {ref} round {round_number}: "
                f"{len(instances)} instances: {' '.join(command)}",
                flush=True,
            )
            code = subprocess.run(command, cwd=ROOT).returncode
            if code != 0:  # its stored rollouts are kept: the next run resumes the family
                sys.exit(f"calibrating {ref} failed (exit {code}); rerun to go on")
        # not a rollout an earlier design left unfinished and this one no longer asks for
        landed = [Outcome.of(ref, key, row) for row in stored_rows(store, run) if row.task in asked]
        with JOURNAL.open("a") as out:
            out.writelines(outcome.line() + "\n" for outcome in landed)
        outcomes += landed
        done.add(ref)
        yield outcomes


def stored_rows(store: Path, run: str) -> list:
    runs = Store(str(store))
    try:
        return runs.list_rollouts(run)
    finally:
        runs.close()


def sft_data(stages: Stages, train: list[str], data: Path, store: Path) -> dict:
    """The SFT stage's data folder, made once and committed: the journal's rollouts stay those of one
    model only if every session trains on the same bytes."""
    argv = [*EGYM, "sft-data", *train, "--levels", "0", "--seeds", "0-3"]
    return kept_dataset(
        stages, "data", argv + ["--out", str(data), "--store", str(store), *HARNESS], data, SFT_DATA
    )


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


def sft_model() -> tuple[dict, dict]:
    """Stages 1 and 2, each done once: the SFT data and the SFT model at SFT (bench_learning starts from it)."""
    WORK.mkdir(parents=True, exist_ok=True)
    stages = Stages(WORK / "stages.json")
    train, _ = level0(families(ACME))
    data = WORK / "data"
    made = sft_data(stages, [f"acme/{f.name}" for f in train], data, WORK / "runs.db")
    trained = stages.run(
        "sft",
        [*EGYM, "sft", "trainer/configs/sft-smollm2.yaml", f"data={data}", f"output_dir={SFT}"]
        + ["epochs=1", "lr=1e-4", "prompt=compact"],
        then=lambda: {"final_loss": read_metrics(SFT / "metrics.jsonl").steps[-1].model_dump()["loss"]},
    )
    return made, trained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-11", help="Family seeds to calibrate on (train split only).")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    pin_numerics()
    made, trained = sft_model()
    found = families(ACME)
    refs = [f"acme/{name}" for name, family in sorted(found.items()) if family.split == "train"]
    store = WORK / "runs.db"
    key = local_model_key(str(SFT / "model"))

    def report(outcomes: list[Outcome]) -> None:
        families_done = {o.family for o in outcomes}
        write(
            "bands",
            {
                "model": "SmolLM2-135M-Instruct after one SFT epoch on oracle turns of train level 0 (seeds 0-3)",
                "model_key": key,
                "harness": "prompt=compact",
                "commands": {
                    "data": "egym sft-data <train families> --levels 0 --seeds 0-3 -H prompt=compact",
                    "sft": "egym sft trainer/configs/sft-smollm2.yaml epochs=1 lr=1e-4 prompt=compact",
                    "calibrate": "egym calibrate <instances> -k 1 --min-samples 6 -p hf -m <sft model> "
                    f"-o seed=0 -o max_new_tokens=256 -H prompt=compact --concurrency {args.concurrency}, "
                    f"for each train family: first each level's first 6 train instances among seeds "
                    f"{args.seeds}, then all of them for the levels with a pass among those 6 (the first "
                    "families, before this rule: every instance, all kept)",
                },
                "sft_data": made,
                "sft": trained,
                "complete": families_done >= set(refs),
                "families_calibrated": len(families_done),
                "train_families": len(refs),
                # Wall time with a rollout in flight, across every session the run was resumed in.
                "calibrate_seconds": busy_seconds(outcomes),
                **distribution(outcomes, refs, args.seeds),
            },
        )

    report(journal_of(key))  # before a report names another model's SFT
    for outcomes in calibrate_families(refs, args.seeds, args.concurrency, SFT / "model", key, store):
        report(outcomes)


if __name__ == "__main__":
    main()
