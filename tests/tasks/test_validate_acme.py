"""`egym validate tasks/acme` in CI: every bundled task's rubric is trustworthy.

For each task, in real sandboxes: the oracle reaches full score, null stays at or
below 10 %, nothing passes on the untouched state unless marked baseline_ok, and
no scripted cheat beats null. Judge items are left out when no judge is configured
(as in CI); validate counts them instead.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from gym.tasks import discover_tasks
from gym.validate import ValidateOptions, validate_tasks

pytestmark = pytest.mark.docker
ACME = Path(__file__).resolve().parents[2] / "tasks" / "acme"


def test_every_acme_task_validates(docker_image, monkeypatch):
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "EGYM_JUDGE"))]:
        monkeypatch.delenv(name)
    tasks = discover_tasks(ACME)
    assert len(tasks) >= 12
    reports = asyncio.run(validate_tasks(tasks, ValidateOptions(concurrency=2)))
    problems = [f"{r.task}: {p}" for r in reports for p in r.problems]
    assert problems == []
    for report in reports:
        assert report.oracle.normalized == pytest.approx(1.0), report.task
        assert report.null.normalized <= 0.1, report.task
        assert all(s.normalized <= report.null.normalized for s in report.cheats.values()), report.task


def test_a_seeded_sample_of_family_instances_validates(docker_image, monkeypatch):
    """Ten families, one instance each, at a level and seed drawn from a fixed seed.

    Sized for CI (about 20 s an instance); bench/bench_families.py --validate all runs every instance.
    """
    import random

    from gym.families import families, materialize

    for name in [k for k in os.environ if k.startswith(("OPENAI_", "EGYM_JUDGE"))]:
        monkeypatch.delenv(name)
    rng = random.Random(20251124)
    found = families(ACME.resolve())
    chosen = rng.sample(sorted(found), 10)
    tasks = [materialize(found[name], rng.choice(found[name].levels), rng.randrange(1000)) for name in chosen]
    reports = asyncio.run(validate_tasks(tasks, ValidateOptions(concurrency=2)))
    assert [f"{r.task}: {p}" for r in reports for p in r.problems] == []
