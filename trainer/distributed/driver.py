"""The Ray side of the loop: actors behind the same Rollouts / LearnerRole roles as the local run.

Topology (docs/training.md has the picture and the GPU recipe):

    driver (this process: curriculum, metrics, checkpoint schedule)
      |-- RolloutWorker x ray.rollout_workers   CPU nodes with Docker: harness + sandboxes + grader
      |-- SamplerServer x ray.samplers           GPU nodes: vLLM engines (only for a backend with its own engine)
      `-- LearnerWorker x ray.learners           GPU nodes: one per GPU, gradients all-reduced

Groups are spread over the workers in contiguous chunks; each group carries
its own seed, so the result does not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from trainer.config import TrainConfig
from trainer.learner import combine_stats
from trainer.loop import GRPOTrainer
from trainer.samplers.base import WeightUpdate, sampler_backend
from trainer.samples import Group, Rollout, TrainItem


def init_ray(config: TrainConfig) -> Any:
    """Connect to `ray.address`, or start a local Ray bound to loopback (no dashboard)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "ray.enabled is true but Ray is not installed: pip install 'enterprise-gym[ray]'"
        ) from None
    if not ray.is_initialized():
        if config.ray.address:
            ray.init(address=config.ray.address)
        else:
            ray.init(_node_ip_address="127.0.0.1", include_dashboard=False)
    return ray


def _chunks(n_items: int, n_parts: int) -> list[tuple[int, int]]:
    size, extra = divmod(n_items, n_parts)
    out, start = [], 0
    for i in range(n_parts):
        end = start + size + (1 if i < extra else 0)
        if end > start:
            out.append((start, end))
        start = end
    return out


class RayRollouts:
    def __init__(self, ray: Any, workers: list[Any], samplers: list[Any]) -> None:
        self.ray, self.workers, self.samplers = ray, workers, samplers

    def tasks(self, split: str) -> list[Any]:
        return self.ray.get(self.workers[0].tasks.remote(split))

    def collect(
        self,
        tasks: Sequence[Any],
        group_size: int,
        seeds: Sequence[int],
        *,
        step: int = 0,
        phase: str = "train",
        on_rollout: Callable[[Rollout], None] | None = None,
    ) -> list[Group]:
        spans = _chunks(len(tasks), len(self.workers))
        futures = [
            worker.collect.remote(list(tasks[a:b]), group_size, list(seeds[a:b]), step, phase)
            for worker, (a, b) in zip(self.workers, spans, strict=False)
        ]
        groups: list[Group] = []
        for future in futures:  # progress per worker's share: a callback cannot cross into the workers
            part = self.ray.get(future)
            groups += part
            for rollout in (r for group in part for r in group.rollouts):
                if on_rollout is not None:
                    on_rollout(rollout)
        return groups

    def sync(self, update: WeightUpdate) -> None:
        ref = self.ray.put(update if update.model is None else update.detached())
        targets = self.samplers or self.workers
        self.ray.get([t.sync.remote(ref) for t in targets])


class RayLearnerGroup:
    def __init__(self, ray: Any, learners: list[Any]) -> None:
        self.ray, self.learners = ray, learners
        address, port = ray.get(learners[0].rendezvous.remote())
        ray.get([learner.init_distributed.remote(address, port) for learner in learners])

    def update(self, items: list[TrainItem]) -> dict[str, float]:
        ref = self.ray.put(items)  # one copy in the object store, read by every rank
        return combine_stats(self.ray.get([learner.update.remote(ref) for learner in self.learners]))

    def weight_update(self, version: int) -> WeightUpdate:
        return self.ray.get(self.learners[0].weight_update.remote(version))

    def save(self, step: int, state: dict[str, Any]) -> Path:
        paths = self.ray.get([learner.save.remote(step, state) for learner in self.learners])
        return Path(paths[0])

    def load(self, path: Path) -> dict[str, Any]:
        return self.ray.get([learner.load.remote(str(path)) for learner in self.learners])[0]


def build_ray_trainer(config: TrainConfig) -> GRPOTrainer:
    """Start the actors described by `config.ray` and wire them into a GRPOTrainer."""
    from trainer.distributed.workers import LearnerWorker, RolloutWorker, SamplerServer

    ray = init_ray(config)
    rc = config.ray
    data = config.model_dump(mode="json")
    samplers = []
    if not sampler_backend(config).shares_model:  # otherwise each rollout worker samples from its own copy
        server = ray.remote(SamplerServer).options(num_gpus=rc.sampler_gpus, num_cpus=1)
        samplers = [server.remote(data) for _ in range(rc.samplers)]
    worker = ray.remote(RolloutWorker).options(num_cpus=rc.worker_cpus, resources=rc.worker_resources or None)
    workers = [worker.remote(data, samplers, i) for i in range(rc.rollout_workers)]
    learner = ray.remote(LearnerWorker).options(num_gpus=rc.learner_gpus, num_cpus=rc.learner_cpus)
    learners = [learner.remote(data, rank, rc.learners) for rank in range(rc.learners)]
    rollouts = RayRollouts(ray, workers, samplers)
    train_tasks = rollouts.tasks(config.tasks.split)
    if not train_tasks:
        raise ConfigError(f"tasks: no '{config.tasks.split}' tasks under {', '.join(config.tasks.refs())}")
    eval_tasks = rollouts.tasks(config.eval.split) if config.eval.interval else []
    # Every actor builds the initial policy from the same path/builder and seed, so no sync is needed yet.
    group = RayLearnerGroup(ray, learners)
    return GRPOTrainer(
        config, rollouts=rollouts, learner=group, train_tasks=train_tasks, eval_tasks=eval_tasks
    )
