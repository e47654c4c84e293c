"""The RolloutSource protocol: tasks + current policy -> groups of scored samples.

Two implementations ship: `gym` (harness + grader in Docker sandboxes, the
same path as `egym rollout`) and `toy` (an in-process verifiable task used by
the learning test and the CPU demo). A source is built as
`Source(config: TrainConfig, tokenizer)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from trainer.config import TrainConfig
    from trainer.samplers.base import Sampler
    from trainer.samples import Group, Rollout


@runtime_checkable
class TaskRef(Protocol):
    """What the curriculum needs of a task (gym's Task fits)."""

    @property
    def key(self) -> str: ...

    @property
    def bands(self) -> Mapping[str, Any]:
        """Calibrated band per model key (gym.models.identity); each value has a `.band`."""
        ...


@runtime_checkable
class RolloutSource(Protocol):
    def tasks(self, split: str) -> list[Any]:
        """Every task of a split, sorted by key (TaskRef-shaped)."""
        ...

    def collect(
        self,
        sampler: Sampler,
        tasks: Sequence[Any],
        *,
        group_size: int,
        seeds: Sequence[int],
        step: int = 0,
        phase: str = "train",
        on_rollout: Callable[[Rollout], None] | None = None,
    ) -> list[Group]:
        """One group of `group_size` rollouts per task; `seeds[i]` makes task i's group reproducible.

        `step` and `phase` ("train" or "eval") say what the rollouts are for (the gym source
        stores them under them); `on_rollout` sees each rollout as it finishes (live progress).
        """
        ...


def build_source(config: TrainConfig, tokenizer: Any) -> RolloutSource:
    """The source named by `config.rollout.source`."""
    from trainer.registry import SOURCES

    cls = SOURCES.load(config.rollout.source)
    return cls(config, tokenizer)
