"""Rollouts as Ray tasks: each runs on some node against that node's own Docker engine.

The driver (the `egym batch` process) keeps the run store; workers only run
episodes and return outcomes as JSON, so nodes need Docker and this package,
not access to the store. `ray` is imported only when this executor is chosen.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.errors import ConfigError
from gym.rollout import RolloutFn, RolloutOutcome, RolloutSpec, resolve_rollout_fn


def _rollout_in_worker(spec: dict[str, Any], rollout_fn: str | RolloutFn | None) -> dict[str, Any]:
    """Runs on a Ray worker: one rollout in a fresh event loop, outcome back as JSON-safe data."""
    fn = resolve_rollout_fn(rollout_fn)
    outcome = asyncio.run(fn(RolloutSpec.model_validate(spec)))
    return outcome.model_dump(mode="json")


def _reap_on_node(run_id: str | None) -> list[str]:
    from gym.sandbox.reaper import reap

    return reap(run_id=run_id) if run_id else reap()


class RayExecutor:
    """`address=None` starts a local Ray instance on 127.0.0.1; otherwise joins the cluster at `address`."""

    def __init__(
        self, *, rollout_fn: str | RolloutFn | None = None, address: str | None = None, num_cpus: float = 0.5
    ):
        try:
            import ray
        except ImportError:
            raise ConfigError("--executor ray needs Ray: pip install 'enterprise-gym[ray]'") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(_node_ip_address="127.0.0.1", **kwargs)
        self._rollout_fn = rollout_fn
        self._remote = ray.remote(num_cpus=num_cpus, max_retries=0)(_rollout_in_worker)
        self._reaper = ray.remote(num_cpus=0)(_reap_on_node)
        self._inflight: set[Any] = set()
        self.submitted = 0

    async def run(self, spec: RolloutSpec) -> RolloutOutcome:
        ref = self._remote.remote(spec.model_dump(mode="json"), self._rollout_fn)
        self.submitted += 1
        self._inflight.add(ref)
        try:
            return RolloutOutcome.model_validate(await ref)
        finally:
            self._inflight.discard(ref)

    def _on_every_node(self, run_id: str | None) -> list[str]:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n["NodeID"] for n in self._ray.nodes() if n.get("Alive")]
        refs = [
            self._reaper.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                run_id
            )
            for node in nodes
        ]
        return [cid for removed in self._ray.get(refs) for cid in removed]

    def reap(self) -> list[str]:
        return self._on_every_node(None)

    def cleanup(self, run_id: str) -> None:
        for ref in list(self._inflight):
            self._ray.cancel(ref, force=True)
        self._on_every_node(run_id)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
