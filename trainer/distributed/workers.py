"""The three actor classes of a Ray training run. Plain classes: `ray.remote` wraps them in driver.py.

- RolloutWorker (CPU nodes with Docker): runs the rollout source. With a
  sampler that shares the model (`hf`) it holds its own copy of the policy
  (weights arrive as tensors after each step); with one that builds its own
  engine (vLLM) it renders prompts locally and asks a SamplerServer for tokens.
- SamplerServer (GPU nodes): one such engine, shared by workers.
- LearnerWorker (GPU nodes): one per GPU; rank 0 saves checkpoints and
  publishes weights; gradients are summed across ranks with torch.distributed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from trainer.config import TrainConfig
from trainer.samplers.base import Completion, Request, WeightUpdate
from trainer.samples import Group, TrainItem


def _threads(cpus: float) -> None:
    torch.set_num_threads(max(1, int(cpus)))


class RemoteSampler:
    """The Sampler protocol over a SamplerServer actor handle (tokens are rendered and parsed locally)."""

    def __init__(self, handle: Any, tokenizer: Any) -> None:
        self.handle = handle
        self.tokenizer = tokenizer

    def generate(self, requests: Sequence[Request], params: Any) -> list[list[Completion]]:
        import ray

        return ray.get(self.handle.generate.remote(list(requests), params))

    def sync(self, update: WeightUpdate) -> None:
        pass  # the driver syncs SamplerServers directly, once each

    def chat_policy(self, params: Any, seed: int) -> Any:
        from trainer.samplers.chat import SamplerChatPolicy

        return SamplerChatPolicy(self, self.tokenizer, params, seed=seed, name="vllm")


class RolloutWorker:
    def __init__(self, config: dict[str, Any], sampler_handles: Sequence[Any] = (), index: int = 0) -> None:
        from trainer.rollouts.base import build_source

        self.config = TrainConfig.model_validate(config)
        _threads(self.config.ray.worker_cpus)
        if sampler_handles:
            from trainer.model import load_tokenizer

            tokenizer = load_tokenizer(self.config.model, self.config.seed)
            self.sampler: Any = RemoteSampler(sampler_handles[index % len(sampler_handles)], tokenizer)
        else:  # the sampler shares the model: this worker's own copy
            from trainer.model import load_policy
            from trainer.samplers.base import build_sampler

            model, tokenizer = load_policy(self.config.model, self.config.seed, torch.device("cpu"))
            self.sampler = build_sampler(self.config, tokenizer, model)
        self.source = build_source(self.config, tokenizer)

    def tasks(self, split: str) -> list[Any]:
        return self.source.tasks(split)

    def collect(
        self, tasks: Sequence[Any], group_size: int, seeds: Sequence[int], step: int, phase: str
    ) -> list[Group]:
        return self.source.collect(
            self.sampler, tasks, group_size=group_size, seeds=seeds, step=step, phase=phase
        )

    def sync(self, update: WeightUpdate) -> None:
        self.sampler.sync(update)


class SamplerServer:
    """One inference engine (of a backend that builds its own) serving every worker's generate calls."""

    def __init__(self, config: dict[str, Any]) -> None:
        from trainer.model import load_tokenizer
        from trainer.samplers.base import build_sampler

        self.config = TrainConfig.model_validate(config)
        self.sampler = build_sampler(self.config, load_tokenizer(self.config.model, self.config.seed))

    def generate(self, requests: Sequence[Request], params: Any) -> list[list[Completion]]:
        return self.sampler.generate(requests, params)

    def sync(self, update: WeightUpdate) -> None:
        self.sampler.sync(update)


class LearnerWorker:
    def __init__(self, config: dict[str, Any], rank: int, world_size: int) -> None:
        from trainer.learner import Learner
        from trainer.model import load_policy
        from trainer.seeding import seed_everything

        self.config = TrainConfig.model_validate(config)
        _threads(self.config.ray.learner_cpus)
        seed_everything(self.config.seed)
        self.rank, self.world_size = rank, world_size
        model, tokenizer = load_policy(self.config.model, self.config.seed)
        self.learner = Learner(self.config, model, tokenizer, rank=rank, world_size=world_size)

    def rendezvous(self) -> tuple[str, int]:
        """Rank 0's address and a free port for torch.distributed."""
        import socket

        import ray

        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        return ray.util.get_node_ip_address(), port

    def init_distributed(self, address: str, port: int) -> None:
        import torch.distributed as dist

        if self.world_size == 1:
            return
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if address.startswith("127."):
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # a local cluster: keep gloo on loopback
        dist.init_process_group(
            backend, init_method=f"tcp://{address}:{port}", rank=self.rank, world_size=self.world_size
        )

    def update(self, items: list[TrainItem]) -> dict[str, float]:
        return self.learner.update(items)

    def weight_update(self, version: int) -> WeightUpdate:
        return self.learner.weight_update(version).detached()

    def save(self, step: int, state: dict[str, Any]) -> str | None:
        if self.rank != 0:
            return None
        from trainer.checkpoint import save_checkpoint

        path = save_checkpoint(
            self.config.checkpoint_dir,
            step,
            model=self.learner.model,
            tokenizer=self.learner.tokenizer,
            learner_state=self.learner.state_dict(),
            state={**state, "config": self.config.model_dump(mode="json")},
            keep=self.config.checkpoint.keep,
        )
        return str(path)

    def load(self, path: str) -> dict[str, Any]:
        from trainer.checkpoint import load_checkpoint

        learner_state, state = load_checkpoint(Path(path), self.learner.model)
        self.learner.load_state_dict(learner_state)
        return state
