"""Task families at scale: how many distinct instances they make, and how fast they validate.

    .venv/bin/python bench/bench_families.py [--validate all|N] [--concurrency 2]   -> bench/results/families.json

Distinct instances: every family at every level over the library's seeds (0..9,
gym.families.COUNT_SEEDS), counted by content (two seeds that pick the same facts are one instance).
Validation: each distinct instance (at the first seed that makes it) through `egym validate`
(oracle full marks, null <= 10 %, the untouched state, every scripted cheat <= null, in real
sandboxes), reported as instances per minute and the total time. `--validate N` takes a seeded
sample of N; `all` takes every one, in a seeded shuffled order (so a partial run is a fair
sample). Validating all takes hours on 2 cores, so each result is appended to
bench/results/validate-families.jsonl as it lands, with the commit it ran on; the journal is
committed, and rerunning the same command goes on where it stopped, in this session or a
later one (results of a changed instance are not reused: the key is its digest).
families.json is rewritten after every round, so a stopped run leaves a true report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import write
from gym.families import COUNT_SEEDS, distinct_instances, families, materialize
from gym.validate import ValidateOptions, validate_tasks

ROOT = Path(__file__).resolve().parents[1]
ACME = ROOT / "tasks" / "acme"
JOURNAL = ROOT / "bench" / "results" / "validate-families.jsonl"
CHUNK = 8  # instances validated per round: a crash loses at most this much work


def _journal() -> list[dict]:
    """Every result in the order it landed (an instance rechecked has several)."""
    if not JOURNAL.is_file():
        return []
    entries = []
    for line in JOURNAL.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if isinstance(entry, dict) and "digest" in entry:
            entries.append(entry)
    return entries


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--validate", default="24", help="'all', or how many distinct instances to sample")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--recheck-invalid", action="store_true", help="validate again the instances last found invalid"
    )
    args = parser.parse_args()
    found = families(ACME)
    started = time.perf_counter()
    distinct = {
        (name, level): distinct_instances(family, level)
        for name, family in found.items()
        for level in family.levels
    }
    generate_s = time.perf_counter() - started
    pool = [(name, level, d, seed) for (name, level), seeds in distinct.items() for d, seed in seeds.items()]
    result = {
        "families": len(found),
        "families_with_3_levels": sum(len(f.levels) >= 3 for f in found.values()),
        "family_levels": len(distinct),
        "level_0_families": sum(0 in f.levels for f in found.values()),
        "seeds_per_level": COUNT_SEEDS,
        "distinct_instances": len(pool),
        "distinct_by_family_level": {f"{n}/l{lv}": len(d) for (n, lv), d in sorted(distinct.items())},
        "generate_s": round(generate_s, 2),
    }
    size = len(pool) if args.validate == "all" else min(int(args.validate), len(pool))
    chosen = random.Random(7).sample(pool, size)
    history = _journal()
    journal = {entry["digest"]: entry for entry in history}  # the latest result of each instance
    flaky = {e["digest"] for e in history if not e["ok"]}  # invalid once; rechecked valid = a flake
    recheck = [e for e in chosen if args.recheck_invalid and e[2] in journal and not journal[e[2]]["ok"]]
    todo = recheck + [e for e in chosen if e[2] not in journal]  # rechecks first: they are few
    done = len(chosen) - len(todo) + len(recheck)
    print(
        f"{len(pool)} distinct instances; validating {len(chosen)} ({done} done, {len(recheck)} to recheck)"
    )
    JOURNAL.parent.mkdir(parents=True, exist_ok=True)
    opts = ValidateOptions(concurrency=args.concurrency)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    report(result, chosen, journal, flaky, args)
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        tasks = [materialize(found[name], level, seed) for name, level, _, seed in chunk]
        t = time.perf_counter()
        reports = asyncio.run(validate_tasks(tasks, opts))
        per_instance = (time.perf_counter() - t) / len(chunk)
        with JOURNAL.open("a") as out:
            for (name, level, digest, seed), checked in zip(chunk, reports, strict=True):
                entry = {
                    "digest": digest,
                    "instance": f"{name}-l{level}-s{seed}",
                    "ok": checked.ok,
                    "commit": commit,
                    "problems": checked.problems,
                    "seconds": round(per_instance, 2),
                }
                out.write(json.dumps(entry) + "\n")
                journal[digest] = entry
        report(result, chosen, journal, flaky, args)  # a stopped run leaves a true report of what it did


def report(
    result: dict, chosen: list, journal: dict[str, dict], flaky: set[str], args: argparse.Namespace
) -> None:
    """Write families.json from the journal's latest results for the chosen instances, done so far."""
    entries = [journal[d] for _, _, d, _ in chosen if d in journal]
    seconds = sum(e["seconds"] for e in entries)
    by_commit: dict[str, list[dict]] = {}
    for entry in entries:
        by_commit.setdefault(entry.get("commit", "?"), []).append(entry)
    result["validated"] = {
        "instances": len(entries),
        "of": f"all {len(chosen)}" if args.validate == "all" else f"a seeded sample of {len(chosen)}",
        "remaining": len(chosen) - len(entries),
        "valid": sum(e["ok"] for e in entries),
        "invalid": {e["instance"]: e["problems"] for e in entries if not e["ok"]},
        # Invalid once, valid when checked again with the same content (--recheck-invalid): flaky runs.
        "valid_on_recheck": sorted(e["instance"] for e in entries if e["ok"] and e["digest"] in flaky),
        "concurrency": args.concurrency,
        "seconds": round(seconds, 1),
        "instances_per_minute": round(len(entries) / seconds * 60, 2) if seconds else None,
        # The code changed between sessions of a long run: how fast each commit validated.
        "by_commit": {
            commit: {
                "instances": len(group),
                "instances_per_minute": round(len(group) / sum(e["seconds"] for e in group) * 60, 2),
            }
            for commit, group in by_commit.items()
        },
    }
    invalid = len(entries) - result["validated"]["valid"]
    print(f"validated {len(entries)}/{len(chosen)}, {invalid} invalid", flush=True)
    write("families", result)


if __name__ == "__main__":
    main()
