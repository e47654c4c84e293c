"""Task families at scale: how many distinct instances they make, and how fast instances validate.

    .venv/bin/python bench/bench_families.py [--seeds 200] [--validate 12]   -> bench/results/families.json

Distinct instances: every family at every level over seeds 0..N-1, counted by the
content of the task and rubric (two seeds that pick the same facts are one instance).
Validation: a seeded sample, each instance through `egym validate` (oracle, null,
the untouched state and every scripted cheat, in real sandboxes), reported as
instances per minute; `--validate 0` skips it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import write
from gym.families import families, materialize
from gym.validate import ValidateOptions, validate_tasks

ACME = Path(__file__).resolve().parents[1] / "tasks" / "acme"


def digest(task) -> str:
    """What makes an instance: its prompt, overlay and rubric items (not its id, title or split)."""
    rubric = json.loads(
        (task.path.parent.parent.parent / "rubrics" / task.world / f"{task.id}.json").read_text()
    )
    overlay = sorted(
        (p.name, p.read_bytes()) for p in (task.path / "initial_state").rglob("*") if p.is_file()
    )
    body = json.dumps([task.prompt, rubric["items"], rubric.get("damage"), repr(overlay)], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--validate", type=int, default=12)
    args = parser.parse_args()
    found = families(ACME)
    distinct: dict[str, set[str]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name, family in found.items():
            for level in family.levels:
                key = f"{name}/l{level}"
                distinct[key] = {digest(materialize(family, level, s, Path(tmp))) for s in range(args.seeds)}
    generate_s = time.perf_counter() - started
    result = {
        "families": len(found),
        "family_levels": len(distinct),
        "seeds_per_level": args.seeds,
        "instances_generated": len(distinct) * args.seeds,
        "distinct_instances": sum(len(v) for v in distinct.values()),
        "distinct_by_family_level": {k: len(v) for k, v in sorted(distinct.items())},
        "generate_s": round(generate_s, 2),
    }
    if args.validate:
        rng = random.Random(7)
        pool = [(f, level) for f in found.values() for level in f.levels]
        sample = [
            materialize(f, level, rng.randrange(args.seeds))
            for f, level in rng.choices(pool, k=args.validate)
        ]
        t = time.perf_counter()
        reports = asyncio.run(validate_tasks(sample, ValidateOptions(concurrency=2)))
        seconds = time.perf_counter() - t
        result["validated"] = {
            "instances": len(sample),
            "valid": sum(r.ok for r in reports),
            "problems": [f"{r.task}: {p}" for r in reports for p in r.problems],
            "seconds": round(seconds, 1),
            "instances_per_minute": round(len(sample) / seconds * 60, 2),
        }
    write("families", result)


if __name__ == "__main__":
    main()
