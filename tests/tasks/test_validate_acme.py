"""`egym validate tasks/acme` in CI: every bundled task's rubric is trustworthy.

For each task, in real sandboxes: the oracle reaches full score, null stays at or
below 10 %, nothing passes on the untouched state unless marked baseline_ok, and
no scripted cheat nor the white-box attacker beats null. Judge items are left out when no judge is configured
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
TASKS = discover_tasks(ACME)


@pytest.fixture
def no_judge(monkeypatch):
    """As in CI: no judge model, so judge items are left out (validate counts them instead)."""
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "EGYM_JUDGE"))]:
        monkeypatch.delenv(name)


def test_the_world_bundles_its_hand_written_tasks():
    assert len(TASKS) >= 12


# One test a task: each has its own time limit and its own line in a failure or `--durations`
# (all 14 in one test took 5-10 minutes, against pytest's limit of 10 on a busy machine).
@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.key)
def test_each_acme_task_validates(task, docker_image, no_judge):
    (report,) = asyncio.run(validate_tasks([task], ValidateOptions(concurrency=2)))
    assert report.problems == []
    assert report.oracle.normalized == pytest.approx(1.0)
    assert report.null.normalized <= 0.1
    assert {
        name: s.normalized for name, s in report.cheats.items() if s.normalized > report.null.normalized
    } == {}


def test_a_fresh_sample_of_family_instances_validates(docker_image, no_judge):
    """Ten families, one instance each, at a level and a seed in 0-199 drawn afresh on every run:
    a valid library must be valid for the seeds people train on, not only for those it lists.

    The draw is printed and named in a failure; EGYM_VALIDATE_SEED=<n> replays it. Sized for CI
    (about 20 s an instance); bench/bench_families.py --validate all runs every instance.
    """
    import random

    from gym.families import families, materialize

    draw = int(os.environ.get("EGYM_VALIDATE_SEED") or random.SystemRandom().randrange(2**32))
    print(f"family sample drawn with EGYM_VALIDATE_SEED={draw}")
    rng = random.Random(draw)
    found = families(ACME.resolve())
    chosen = rng.sample(sorted(found), 10)
    tasks = [materialize(found[name], rng.choice(found[name].levels), rng.randrange(200)) for name in chosen]
    reports = asyncio.run(validate_tasks(tasks, ValidateOptions(concurrency=2)))
    problems = [f"{r.task}: {p}" for r in reports for p in r.problems]
    assert problems == [], f"EGYM_VALIDATE_SEED={draw} reproduces this draw"
