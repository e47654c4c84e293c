"""Where rollouts run. The protocol is three methods; `LocalExecutor` runs them in this process.

Concurrency is bounded by the runner, not the executor, so every executor
sees at most `--concurrency` rollouts at a time.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.plugins import Registry
from gym.rollout import RolloutFn, RolloutOutcome, RolloutSpec, resolve_rollout_fn


class Executor(Protocol):
    async def run(self, spec: RolloutSpec) -> RolloutOutcome:
        """Run one rollout to its outcome."""
        ...

    def reap(self) -> list[str]:
        """Remove orphaned containers (their owner process is gone) wherever rollouts run."""
        ...

    def cleanup(self, run_id: str) -> None:
        """After an interrupted batch: remove this run's containers that this process started."""
        ...

    def close(self) -> None:
        """Release what the executor holds (a Ray instance it started)."""
        ...


class LocalExecutor:
    """Rollouts as asyncio tasks in this process (blocking Docker calls go to threads inside the rollout)."""

    def __init__(self, rollout_fn: str | RolloutFn | None = None):
        self.rollout_fn = resolve_rollout_fn(rollout_fn)

    async def run(self, spec: RolloutSpec) -> RolloutOutcome:
        return await self.rollout_fn(spec)

    def reap(self) -> list[str]:
        from gym.sandbox.reaper import reap

        return reap()

    def cleanup(self, run_id: str) -> None:
        from gym.sandbox.reaper import reap

        reap(run_id=run_id)

    def close(self) -> None:
        pass


EXECUTORS = Registry("executor", "egym.executors")
EXECUTORS.register("local", "gym.batch.executors:LocalExecutor")
EXECUTORS.register("ray", "gym.batch.ray_executor:RayExecutor", extra="ray")


def make_executor(name: str, *, rollout_fn: str | None = None, **options: Any) -> Executor:
    """`local` (asyncio, default), `ray` (options: address, num_cpus), or an `egym.executors` entry point."""
    return EXECUTORS.load(name)(rollout_fn=rollout_fn, **options)
