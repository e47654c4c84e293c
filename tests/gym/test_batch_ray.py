"""The same batch through a local Ray instance and through asyncio gives the same results."""

from __future__ import annotations

import asyncio
import os

import pytest

from gym.batch import BatchRequest, run_batch
from gym.batch.executors import LocalExecutor
from gym.batch.ray_executor import RayExecutor
from gym.store import Store
from gym.tasks import discover_tasks
from tests.gym.task_fixture import write_mini_world

pytestmark = pytest.mark.docker
ROLLOUT = (
    "tests.gym.batch_fakes:known_rate_rollout"  # real rollouts; oracle for the first N samples of pass-N
)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def outcomes(store: Store, run_id: str) -> dict:
    return {
        (r.task, r.sample): (r.status, r.reward, r.stop_reason, [(i.item_id, i.status) for i in r.items])
        for r in store.list_rollouts(run_id, with_items=True)
    }


def test_ray_and_asyncio_runners_agree(tmp_path, docker_image, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", REPO)  # Ray workers import the test's rollout function
    tasks = discover_tasks(write_mini_world(tmp_path, {"pass-2": {}, "pass-1": {}}))
    store = Store(str(tmp_path / "runs.db"))

    def request(run_id: str) -> BatchRequest:
        return BatchRequest(tasks=tasks, policy="known-rate", samples=3, concurrency=3, run_id=run_id)

    local = asyncio.run(run_batch(store, request("local"), LocalExecutor(ROLLOUT)))
    executor = RayExecutor(rollout_fn=ROLLOUT)
    try:
        remote = asyncio.run(run_batch(store, request("ray"), executor))
    finally:
        executor.close()
    assert executor.submitted == 6
    assert (local.failed, remote.failed) == (0, 0)
    expected = outcomes(store, "local")
    assert outcomes(store, "ray") == expected
    assert sorted(v[1] for v in expected.values()) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
