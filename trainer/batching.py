"""Train items -> padded tensors, split into micro-batches (right padding, padding weighted 0)."""

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

    def to(self, device: torch.device | str) -> MicroBatch:
        return MicroBatch(
            *(
                t.to(device)
                for t in (
                    self.input_ids,
                    self.attention_mask,
                    self.old_logprobs,
                    self.weights,
                    self.advantages,
                )
            )
        )


def collate(items: Sequence[TrainItem], weights: Sequence[float], pad_id: int = 0) -> MicroBatch:
    """One padded batch; `weights[i]` is the per-token loss weight of item i's model tokens."""
    width = max(len(item.sample.token_ids) for item in items)
    n = len(items)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    attention = torch.zeros((n, width), dtype=torch.long)
    old = torch.zeros((n, width), dtype=torch.float32)
    w = torch.zeros((n, width), dtype=torch.float32)
    for row, (item, weight) in enumerate(zip(items, weights, strict=True)):
        sample = item.sample
        length = len(sample.token_ids)
        ids[row, :length] = torch.tensor(sample.token_ids, dtype=torch.long)
        attention[row, :length] = 1
        old[row, :length] = torch.tensor(sample.logprobs, dtype=torch.float32)
        w[row, :length] = torch.tensor(sample.mask, dtype=torch.float32) * weight
    adv = torch.tensor([item.advantage for item in items], dtype=torch.float32)
    return MicroBatch(ids, attention, old, w, adv)


def micro_batches(
    items: Sequence[TrainItem], weights: Sequence[float], size: int, pad_id: int = 0
) -> Iterator[MicroBatch]:
    """Consecutive chunks of at most `size` items, each collated."""
    for start in range(0, len(items), size):
        yield collate(items[start : start + size], weights[start : start + size], pad_id)
