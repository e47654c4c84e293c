"""Batch runner: bounded concurrency, every rollout stored once, resume after failures and after SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gym.batch import BatchRequest, default_run_id, run_batch
from gym.batch.executors import LocalExecutor
from gym.sandbox.docker_client import client
from gym.store import Store
from gym.tasks import discover_tasks
from tests.gym.batch_fakes import flaky_rollout, sandbox_rollout, write_stub_tasks
from tests.gym.task_fixture import write_mini_world

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.docker
NO_MCP = {"mcp_servers": {}}  # bash and file tools are enough here


def containers_of(run_id: str) -> list:
    return client().containers.list(all=True, filters={"label": f"egym.run={run_id}"}, ignore_removed=True)


@pytest.fixture
def tasks(tmp_path, docker_image):
    return discover_tasks(write_stub_tasks(tmp_path / "tasks", ["alpha", "beta"]))


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "runs.db"))
    yield s
    s.close()


class CountingExecutor(LocalExecutor):
    """Records the most rollouts that were in flight at once."""

    def __init__(self, fn):
        super().__init__(fn)
        self.inflight = self.peak = 0

    async def run(self, spec):
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        try:
            return await super().run(spec)
        finally:
            self.inflight -= 1


async def test_eight_rollouts_at_concurrency_four_are_all_stored(tmp_path, store, docker_image):
    tasks = discover_tasks(write_mini_world(tmp_path, {"first": {}, "second": {}}))
    executor = CountingExecutor(None)  # the real rollout: sandbox, harness, oracle policy, grader
    req = BatchRequest(tasks=tasks, policy="oracle", samples=4, concurrency=4, run_id="eight", harness=NO_MCP)
    result = await run_batch(store, req, executor)
    assert (result.planned, result.ran, result.failed) == (8, 8, 0)
    assert executor.peak == 4
    rows = store.list_rollouts("eight", with_items=True)
    assert sorted((r.task, r.sample) for r in rows) == [(t.key, s) for t in tasks for s in range(4)]
    assert all(r.status == "done" and r.attempts == 1 and r.stop_reason == "answered" for r in rows)
    assert {str(r.grade_model()) for r in rows} == {"8/8"}
    assert (
        len([i for i in rows[0].items if i.section != "damage"]) == 4
        and rows[0].trajectory_model().steps[0].results[0].output.strip() == "UPDATE 1"
    )
    assert store.get_run("eight").status == "done"
    assert containers_of("eight") == []


async def test_failed_rollouts_are_recorded_then_rerun_on_resume(tasks, store):
    req = BatchRequest(tasks=tasks[:1], policy="fake", samples=4, concurrency=2, run_id="flaky")
    first = await run_batch(store, req, LocalExecutor(flaky_rollout))
    assert (first.ran, first.failed) == (4, 2)
    before = {r.sample: r for r in store.list_rollouts("flaky")}
    assert before[1].status == "failed" and "injected start failure" in before[1].error
    assert store.get_run("flaky").status == "failed"

    second = await run_batch(store, req, LocalExecutor(sandbox_rollout))
    assert (second.skipped, second.ran, second.failed) == (2, 2, 0)
    after = {r.sample: r for r in store.list_rollouts("flaky")}
    assert len(after) == 4 and all(r.status == "done" for r in after.values())
    assert after[0].finished_at == before[0].finished_at  # done work is not redone
    assert (after[1].id, after[1].attempts, after[1].error) == (before[1].id, 2, None)


def test_default_run_id_is_derived_from_the_arguments(tasks):
    a = BatchRequest(tasks=tasks, policy="oracle", samples=2)
    assert default_run_id(a) == default_run_id(
        BatchRequest(tasks=list(reversed(tasks)), policy="oracle", samples=2)
    )
    assert default_run_id(a) != default_run_id(BatchRequest(tasks=tasks, policy="oracle", samples=3))
    assert default_run_id(a).startswith("batch-oracle-")


def test_another_rollout_image_is_another_run(tasks, monkeypatch):
    """`--chat real` (EGYM_IMAGE) must not resume, and skip, the default image's run."""
    request = BatchRequest(tasks=tasks, policy="oracle", samples=2)
    monkeypatch.delenv("EGYM_IMAGE", raising=False)
    compat = default_run_id(request)
    monkeypatch.setenv("EGYM_IMAGE", "egym/world:latest")
    assert default_run_id(request) == compat  # the default image, named: the same run
    monkeypatch.setenv("EGYM_IMAGE", "egym/world:mattermost")
    assert default_run_id(request) != compat


def _batch_cmd(tasks_dir: Path, db: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gym.cli",
        "batch",
        str(tasks_dir),
        "--policy",
        "fake",
        "--samples",
        "5",
        "--concurrency",
        "3",
        "--run",
        "killme",
        "--store",
        str(db),
        "--rollout-fn",
        "tests.gym.batch_fakes:sandbox_rollout",
    ]


def test_sigkill_mid_batch_then_rerun_finishes_without_duplicates(tmp_path, docker_image):
    tasks_dir = write_stub_tasks(tmp_path / "tasks", ["alpha", "beta"])
    db = tmp_path / "runs.db"
    env = {**os.environ, "PYTHONPATH": str(REPO), "EGYM_FAKE_DELAY": "2", "COLUMNS": "120"}
    proc = subprocess.Popen(
        _batch_cmd(tasks_dir, db), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    store = Store(str(db))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        stats = store.run_stats("killme") if store.list_runs() else {"done": 0, "running": 0}
        if stats["done"] >= 2 and stats["running"] >= 1 and containers_of("killme"):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished_before = {r.id: r.finished_at for r in store.list_rollouts("killme", status="done")}
    assert store.run_stats("killme")["running"] >= 1
    assert containers_of("killme"), "the killed runner should have left containers behind"

    rerun = subprocess.run(
        _batch_cmd(tasks_dir, db),
        cwd=REPO,
        env={**env, "EGYM_FAKE_DELAY": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:] + rerun.stdout[-2000:]
    assert "orphan container(s) reaped" in rerun.stdout
    rows = store.list_rollouts("killme")
    assert len(rows) == 10
    assert len({(r.task, r.sample) for r in rows}) == 10
    assert all(r.status == "done" for r in rows)
    for row in rows:
        if row.id in finished_before:
            assert row.finished_at == finished_before[row.id] and row.attempts == 1
    assert containers_of("killme") == []


def test_interrupt_cancels_and_removes_the_runs_containers(tasks, store):
    async def main():
        req = BatchRequest(tasks=tasks, policy="fake", samples=2, concurrency=2, run_id="cancelled")
        task = asyncio.create_task(run_batch(store, req, LocalExecutor(sandbox_rollout)))
        while not containers_of("cancelled"):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    os.environ["EGYM_FAKE_DELAY"] = "5"
    try:
        asyncio.run(main())
    finally:
        del os.environ["EGYM_FAKE_DELAY"]
    assert store.get_run("cancelled").status == "interrupted"
    assert {r.status for r in store.list_rollouts("cancelled")} == {"pending"}  # released, not left "running"
    assert containers_of("cancelled") == []
