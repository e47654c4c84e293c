"""The Sampler protocol: generate completions with logprobs, take new weights, drive the harness.

A backend (the class `sampler.backend` names: `hf`, `vllm`, an `egym.samplers`
entry point or `module:Class`) says itself whether it shares the policy model,
and every caller builds it through `build_sampler`. The trainer calls `sync`
after every optimizer step. A sampler that shares the learner's model object
(in one process) syncs for free; across processes (Ray) or into vLLM the
update carries tensors: the LoRA adapter's only, or every weight for a full
fine-tune.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from core.errors import ConfigError
from gym.models.sampling import SamplingParams

if TYPE_CHECKING:
    import torch

    from gym.policies.base import Policy
    from trainer.config import SamplingConfig, TrainConfig


@dataclass(slots=True)
class Completion:
    """One sampled continuation: its tokens and the sampler's logprob of each (at the sampling temperature)."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str = "stop"  # "stop" (hit an end token) or "length"


@dataclass(slots=True)
class Request:
    """`n` completions of one prompt; `seed` makes them reproducible whatever else is in the batch."""

    prompt_ids: list[int]
    n: int = 1
    seed: int = 0


@dataclass
class WeightUpdate:
    """New policy weights after an optimizer step.

    `model` is set in-process (the learner's module, nothing copied); `tensors`
    is set when the update crosses a process boundary. `lora_config` is the
    peft adapter config (a dict) when only adapter weights are carried.
    """

    version: int
    model: Any = None
    tensors: dict[str, torch.Tensor] | None = None
    lora_config: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_lora(self) -> bool:
        return self.lora_config is not None

    def named_tensors(self) -> dict[str, torch.Tensor]:
        """The weights as CPU tensors (adapter weights only for LoRA)."""
        if self.tensors is not None:
            return self.tensors
        from trainer.weights import export_weights

        return export_weights(self.model)

    def detached(self) -> WeightUpdate:
        """A copy that carries tensors instead of the module, safe to send to another process."""
        return WeightUpdate(self.version, None, self.named_tensors(), self.lora_config, dict(self.meta))


@runtime_checkable
class Sampler(Protocol):
    """What the trainer needs from an inference engine."""

    def generate(self, requests: Sequence[Request], params: SamplingConfig) -> list[list[Completion]]:
        """For each request, its `n` completions; engines batch the requests together."""
        ...

    def sync(self, update: WeightUpdate) -> None:
        """Make later generations use the updated weights."""
        ...

    def chat_policy(self, params: SamplingConfig, seed: int) -> Policy:
        """A gym Policy (messages + tools -> AssistantTurn with token ids and logprobs) on this engine."""
        ...


@runtime_checkable
class SamplerBackend(Protocol):
    """A sampler class as `sampler.backend` names it.

    `shares_model`: True when it generates with a model object of the process that builds it: the
    learner's own in a local run (weights shared, nothing copied), a rollout worker's own copy under
    Ray. False when it builds its own engine from `config.model` (vLLM): under Ray it runs in
    SamplerServers that the rollout workers share.
    """

    shares_model: bool

    def build(self, config: TrainConfig, tokenizer: Any, model: Any) -> Sampler:
        """The sampler (a classmethod); `model` is the policy model when `shares_model`, else None."""
        ...


def sampler_backend(config: TrainConfig) -> SamplerBackend:
    """The class `config.sampler.backend` names (vLLM itself is imported only when it is built)."""
    from trainer.registry import SAMPLERS

    backend = SAMPLERS.load(config.sampler.backend)
    if not isinstance(backend, SamplerBackend):
        raise ConfigError(
            f"sampler backend '{config.sampler.backend}' must declare `shares_model` (a bool) and a "
            "`build(config, tokenizer, model)` classmethod (trainer/samplers/base.py)"
        )
    return backend


def build_sampler(config: TrainConfig, tokenizer: Any, model: Any = None) -> Sampler:
    """The configured sampler; it is handed `model` (this process's policy) only if it shares the model."""
    backend = sampler_backend(config)
    if backend.shares_model and model is None:
        raise ConfigError(
            f"sampler backend '{config.sampler.backend}' shares the policy model; build it where one is loaded"
        )
    return backend.build(config, tokenizer, model if backend.shares_model else None)


def engine_params(params: SamplingConfig) -> SamplingParams:
    """The trainer's sampling section as the gym engines' SamplingParams."""
    return SamplingParams(
        temperature=params.temperature,
        top_p=params.top_p,
        top_k=params.top_k,
        max_new_tokens=params.max_new_tokens,
    )
