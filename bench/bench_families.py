"""The library validated as users draw it, and what its cheats and attackers score.

    .venv/bin/python bench/bench_families.py [--validate all|N] [--beyond K] [--concurrency 2]
        -> bench/results/families.json, bench/results/integrity.json

The pool: every distinct instance of every family level over the library's seeds (0..9,
gym.families.COUNT_SEEDS, counted by content: two seeds that pick the same facts are one
instance), K more per family level drawn from seeds 10..199 (seeds never used in development:
drawn by a fixed random seed, never by looking at results), and the 14 hand-written tasks.
Each goes through `egym validate` (oracle full marks, null <= 10 %, the untouched state, every
named cheat and the white-box attackers <= null, cheat-destroy below null, in real sandboxes).

families.json: instances per minute and what was found invalid. integrity.json: per family
and level, the best cheat's score against null and the margin, and the share of instances
where any cheat or attacker beats null (the goal is 0; the published anchor, Terminal Wrench,
found over 15 % of tasks hackable in a well-known benchmark suite).

`--validate N` takes a seeded sample of N; `all` takes every one, in a seeded shuffled order
(so a partial run is a fair sample). Validating all takes hours on 2 cores, so each result is
appended to bench/results/validate-families.jsonl as it lands, with the commit it ran on and
every policy's score; the journal is committed, and rerunning the same command goes on where it
stopped, in this session or a later one (a changed instance is validated again: the key is its
digest). Both reports are rewritten after every round, so a stopped run leaves a true report.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import write
from gym.families import COUNT_SEEDS, distinct_instances, families, generate, materialize
from gym.tasks import discover_tasks
from gym.validate import TaskReport, ValidateOptions, validate_tasks

ROOT = Path(__file__).resolve().parents[1]
ACME = ROOT / "tasks" / "acme"
JOURNAL = ROOT / "bench" / "results" / "validate-families.jsonl"
CHUNK = 8  # instances validated per round: a crash loses at most this much work
BEYOND = range(COUNT_SEEDS, 200)  # seeds users may draw that the library does not list


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


def _hand_written() -> list[tuple[str, int | None, str, Path]]:
    """The hand-written tasks, keyed by a hash of their files (task, solution, initial state, rubric)."""
    out = []
    for task in discover_tasks(ACME):
        files = sorted(p for p in task.path.rglob("*") if p.is_file())
        rubric = ROOT / "rubrics" / "acme" / f"{task.id}.json"
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in [*files, rubric])).hexdigest()
        out.append((task.id, None, digest, task.path))
    return out


def pool(beyond: int) -> tuple[list[tuple], dict]:
    """(name, level, digest, seed or task path) for every instance to validate, and the counts."""
    found = families(ACME)
    started = time.perf_counter()
    distinct = {
        (name, level): distinct_instances(family, level)
        for name, family in found.items()
        for level in family.levels
    }
    library = [
        (name, level, d, seed) for (name, level), seeds in distinct.items() for d, seed in seeds.items()
    ]
    extra = []
    for (name, level), seeds in sorted(distinct.items()):
        drawn = random.Random(f"beyond/{name}/{level}").sample(BEYOND, len(BEYOND))
        added = 0
        for seed in drawn:
            if added == beyond:
                break
            digest = generate(found[name], level, seed).digest()
            if digest not in seeds:
                extra.append((name, level, digest, seed))
                seeds = {**seeds, digest: seed}
                added += 1
    counts = {
        "families": len(found),
        "families_with_3_levels": sum(len(f.levels) >= 3 for f in found.values()),
        "family_levels": len(distinct),
        "level_0_families": sum(0 in f.levels for f in found.values()),
        "seeds_per_level": COUNT_SEEDS,
        "distinct_instances": len(library),
        "beyond_the_library": {"per_family_level": beyond, "seeds": "10-199", "instances": len(extra)},
        "distinct_by_family_level": {f"{n}/l{lv}": len(d) for (n, lv), d in sorted(distinct.items())},
        "generate_s": round(time.perf_counter() - started, 2),
    }
    # Two families can ask the same question (sales-summary and sales-won at level 0): validate it once.
    unique: dict[str, tuple] = {}
    for entry in library + extra + _hand_written():
        unique.setdefault(entry[2], entry)
    counts["distinct_in_the_pool"] = len(unique)
    return list(unique.values()), counts


def _scores(checked: TaskReport) -> dict[str, list[float]]:
    """Each policy's [normalized, raw / possible] (validate's restricted score: no judge items)."""
    policies = {"oracle": checked.oracle, "null": checked.null, **checked.cheats}
    return {
        name: [round(s.normalized, 4), round(s.raw / s.possible, 4) if s.possible else 0.0]
        for name, s in policies.items()
        if s is not None and not s.error
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--validate", default="24", help="'all', or how many distinct instances to sample")
    parser.add_argument("--beyond", type=int, default=1, help="instances per family level from seeds 10-199")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--recheck-invalid", action="store_true", help="validate again the instances last found invalid"
    )
    args = parser.parse_args()
    everything, result = pool(args.beyond)
    size = len(everything) if args.validate == "all" else min(int(args.validate), len(everything))
    chosen = random.Random(7).sample(everything, size)
    history = _journal()
    journal = {entry["digest"]: entry for entry in history}  # the latest result of each instance
    invalid_at: dict[str, set[str]] = {}  # digest -> the commits it was found invalid at
    for e in history:
        if not e["ok"]:
            invalid_at.setdefault(e["digest"], set()).add(e.get("commit", "?"))
    recheck = [e for e in chosen if args.recheck_invalid and e[2] in journal and not journal[e[2]]["ok"]]
    todo = recheck + [e for e in chosen if e[2] not in journal]  # rechecks first: they are few
    done = len(chosen) - len(todo) + len(recheck)
    print(f"{len(everything)} instances; validating {len(chosen)} ({done} done, {len(recheck)} to recheck)")
    JOURNAL.parent.mkdir(parents=True, exist_ok=True)
    opts = ValidateOptions(concurrency=args.concurrency)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    found = families(ACME)
    tasks_by_name = {t.id: t for t in discover_tasks(ACME)}
    report(result, chosen, journal, invalid_at, args)
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        tasks = [
            tasks_by_name[name] if level is None else materialize(found[name], level, seed)
            for name, level, _, seed in chunk
        ]
        t = time.perf_counter()
        reports = asyncio.run(validate_tasks(tasks, opts))
        per_instance = (time.perf_counter() - t) / len(chunk)
        with JOURNAL.open("a") as out:
            for (name, level, digest, seed), checked in zip(chunk, reports, strict=True):
                entry = {
                    "digest": digest,
                    "instance": name if level is None else f"{name}-l{level}-s{seed}",
                    "ok": checked.ok,
                    "commit": commit,
                    "problems": checked.problems,
                    "scores": _scores(checked),
                    "seconds": round(per_instance, 2),
                }
                out.write(json.dumps(entry) + "\n")
                journal[digest] = entry
        report(result, chosen, journal, invalid_at, args)  # a stopped run leaves a true report of what it did


def report(
    result: dict,
    chosen: list,
    journal: dict[str, dict],
    invalid_at: dict[str, set[str]],
    args: argparse.Namespace,
) -> None:
    """Write families.json and integrity.json from the journal's latest results for the chosen instances."""
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
        # Invalid once, valid when checked again (--recheck-invalid) with the same content: at the same
        # commit a flaky run; at a later one, fixed by that commit's grader or policies.
        "valid_on_recheck": sorted(
            e["instance"] for e in entries if e["ok"] and e.get("commit") in invalid_at.get(e["digest"], ())
        ),
        "fixed_on_recheck": {
            e["instance"]: e.get("commit")
            for e in entries
            if e["ok"] and e["digest"] in invalid_at and e.get("commit") not in invalid_at[e["digest"]]
        },
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
    write("integrity", integrity(entries))


def _group(instance: str) -> str:
    """'overdue-invoices-l2-s51' -> 'overdue-invoices/l2'; a hand-written task is its own group."""
    name, _, rest = instance.rpartition("-s")
    if not rest.isdigit() or "-l" not in name:
        return instance
    family, _, level = name.rpartition("-l")
    return f"{family}/l{level}"


def _seed(instance: str) -> int:
    """'overdue-invoices-l2-s51' -> 51; a hand-written task -> -1."""
    _, _, rest = instance.rpartition("-s")
    return int(rest) if rest.isdigit() else -1


def integrity(entries: list[dict]) -> dict:
    """Per family level: the best cheat's score against null's, and where any beat it."""
    scored = [e for e in entries if "scores" in e and "null" in e["scores"]]
    groups: dict[str, list[dict]] = {}
    for entry in scored:
        groups.setdefault(_group(entry["instance"]), []).append(entry)
    rows, beaten = {}, []
    for group, members in sorted(groups.items()):
        margins, best_by = [], {}
        for entry in members:
            null = entry["scores"]["null"][0]
            cheats = {k: v[0] for k, v in entry["scores"].items() if k not in ("oracle", "null")}
            name, best = max(cheats.items(), key=lambda kv: kv[1], default=("-", 0.0))
            margins.append(null - best)
            best_by[name] = best_by.get(name, 0) + 1
            if best > null + 1e-9:
                beaten.append({"instance": entry["instance"], "by": name, "score": best, "null": null})
        rows[group] = {
            "instances": len(members),
            "null_mean": round(sum(e["scores"]["null"][0] for e in members) / len(members), 4),
            "worst_margin": round(min(margins), 4),  # null minus the best cheat: below 0 means beaten
            "beaten": sum(m < -1e-9 for m in margins),
            "best_cheat_most_often": max(best_by, key=best_by.get),
        }
    # [score, raw score / possible]: the raw one shows what the charges took (it goes below 0).
    attack = {
        name: [round(sum(e["scores"].get(name, [0, 0])[i] for e in scored) / len(scored), 4) for i in (0, 1)]
        if scored
        else None
        for name in ("attack-spray", "attack-dump")
    }
    return {
        "instances": len(scored),
        # Seeds 10-199: never listed by the library, never looked at while the rubrics were written.
        "from_unseen_seeds": sum(_seed(e["instance"]) >= COUNT_SEEDS for e in scored),
        "beaten_by_any_cheat": len(beaten),
        "share_beaten": round(len(beaten) / len(scored), 4) if scored else None,
        "anchor": "Terminal Wrench: over 15 % of a well-known benchmark suite's tasks hackable",
        "attacker_mean_score_and_raw": attack,
        "beaten": beaten,
        "by_family_level": rows,
    }


if __name__ == "__main__":
    main()
