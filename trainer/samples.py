"""What rollout sources hand the trainer: groups of scored rollouts made of token sequences.

A `Sample` is one training sequence: the token ids the model saw and wrote,
a mask that is 1 only on tokens the model produced (prompt, tool results and
chat-template glue are 0), and the sampler's logprob of each produced token.
Masked positions carry logprob 0.0 and never reach the loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Sample:
    """One training sequence; `mask[i] == 1` means token i was produced by the policy."""

    token_ids: list[int]
    mask: list[int]
    logprobs: list[float]

    def __post_init__(self) -> None:
        if not (len(self.token_ids) == len(self.mask) == len(self.logprobs)):
            raise ValueError(
                f"sample lengths differ: {len(self.token_ids)} tokens, {len(self.mask)} mask, {len(self.logprobs)} logprobs"
            )
        if self.mask and self.mask[0]:
            raise ValueError(
                "the first token cannot be a model token: it has no context to be predicted from"
            )

    @classmethod
    def from_turn(cls, prompt_ids: list[int], completion_ids: list[int], logprobs: list[float]) -> Sample:
        """A prompt (masked) followed by the model's completion (trained on)."""
        if len(completion_ids) != len(logprobs):
            raise ValueError(f"{len(completion_ids)} completion tokens but {len(logprobs)} logprobs")
        return cls(
            token_ids=list(prompt_ids) + list(completion_ids),
            mask=[0] * len(prompt_ids) + [1] * len(completion_ids),
            logprobs=[0.0] * len(prompt_ids) + list(logprobs),
        )

    @property
    def model_tokens(self) -> int:
        return sum(self.mask)


@dataclass(slots=True)
class Rollout:
    """One episode: its training sequences (one per turn, or merged) and its reward."""

    samples: list[Sample]
    reward: float = 0.0
    passed: bool | None = None
    incomplete: bool = False
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Group:
    """G rollouts of one task from the same seed; advantages are computed within it."""

    task: str
    rollouts: list[Rollout]


@dataclass(slots=True)
class TrainItem:
    """A sample ready for the loss: its trajectory's advantage and which trajectory it belongs to."""

    sample: Sample
    advantage: float
    trajectory: int
