"""The Sampler protocol: generate completions with logprobs, take new weights, drive the harness.

The trainer calls `sync` after every optimizer step. In one process the
transformers sampler holds the learner's own model object, so sync is free;
across processes (Ray) or into vLLM the update carries tensors: the LoRA
adapter's only, or every weight for a full fine-tune.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

    from gym.policies.base import Policy
    from trainer.config import SamplingConfig


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
