"""Train items -> padded tensors on the learner's device, in micro-batches (right padding, padding weighted 0)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from trainer.samples import TrainItem


@dataclass
class MicroBatch:
    """Padded tensors for one forward/backward."""

    input_ids: torch.Tensor  # [B, T] long
    attention_mask: torch.Tensor  # [B, T] long, 1 on real tokens
    old_logprobs: torch.Tensor  # [B, T] float, 0 where not a model token
    weights: torch.Tensor  # [B, T] float, mask * normalisation weight
    advantages: torch.Tensor  # [B] float


def collate(
    items: Sequence[TrainItem], weights: Sequence[float], pad_id: int, device: torch.device | str
) -> MicroBatch:
    """One padded batch on `device`; `weights[i]` is the per-token loss weight of item i's model tokens."""
    width = max(len(item.sample.token_ids) for item in items)

    def padded(rows: list[list], fill: float | int, dtype: torch.dtype) -> torch.Tensor:
        # padded as lists, then one copy to the device (not one per row)
        return torch.tensor([row + [fill] * (width - len(row)) for row in rows], dtype=dtype, device=device)

    samples = [item.sample for item in items]
    return MicroBatch(
        input_ids=padded([s.token_ids for s in samples], pad_id, torch.long),
        attention_mask=padded([[1] * len(s.token_ids) for s in samples], 0, torch.long),
        old_logprobs=padded([s.logprobs for s in samples], 0.0, torch.float32),
        weights=padded(
            [[m * w for m in s.mask] for s, w in zip(samples, weights, strict=True)], 0.0, torch.float32
        ),
        advantages=torch.tensor([item.advantage for item in items], dtype=torch.float32, device=device),
    )


def micro_batches(
    items: Sequence[TrainItem], weights: Sequence[float], size: int, pad_id: int, device: torch.device | str
) -> Iterator[MicroBatch]:
    """Consecutive chunks of at most `size` items, each collated on `device`."""
    for start in range(0, len(items), size):
        yield collate(items[start : start + size], weights[start : start + size], pad_id, device)
