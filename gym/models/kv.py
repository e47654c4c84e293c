"""The key/value cache of a batch whose sequences join and leave between decoding steps.

transformers' DynamicLayer concatenates one token onto the whole cache at every
step, which copies the cache once per token: on a CPU with prompts of a few
thousand tokens that costs more than the model itself. `GrowingLayer` keeps
room to grow instead. Sequences of different lengths share a batch by left
padding (masked out), as `model.generate` does for batched prompts; the helpers
below pad, join, select and trim whole caches between steps.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch
from transformers.cache_utils import Cache, DynamicLayer

Tensors = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values [batch, heads, length, head_dim]


class GrowingLayer(DynamicLayer):
    """A cache layer with spare room at the end: appending a token writes in place."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: torch.Tensor | None = None
        self._values: torch.Tensor | None = None
        self._length = 0

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self._length + key_states.shape[-2]
        if self._keys is None or end > self._keys.shape[-2]:
            self._reserve(end, key_states)
        self._keys[..., self._length : end, :] = key_states
        self._values[..., self._length : end, :] = value_states
        self._length = end
        self.keys, self.values = self._keys[..., :end, :], self._values[..., :end, :]
        return self.keys, self.values

    def _reserve(self, need: int, like: torch.Tensor) -> None:
        shape = (*like.shape[:-2], need + max(64, need // 2), like.shape[-1])
        keys, values = like.new_zeros(shape), like.new_zeros(shape)
        if self._keys is not None:
            keys[..., : self._length, :] = self._keys[..., : self._length, :]
            values[..., : self._length, :] = self._values[..., : self._length, :]
        self._keys, self._values = keys, values

    def set(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Hold exactly these tensors (growing from there on)."""
        self.lazy_initialization(keys, values)
        self._keys, self._values, self._length = keys, values, keys.shape[-2]
        self.keys, self.values = keys, values

    def get_seq_length(self) -> int:
        return self._length


def cache_argument(model: object) -> str:
    """The name `model`'s forward takes its cache by: transformers 5.x renames `past_key_values` to
    `cache` (the old name is removed in 5.40); a peft model is asked about the model it wraps."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"


def new_cache(layers: int) -> Cache:
    return Cache(layers=[GrowingLayer() for _ in range(layers)])


def tensors(cache: Cache) -> Tensors:
    return [(layer.keys, layer.values) for layer in cache.layers]


def from_tensors(data: Tensors) -> Cache:
    cache = new_cache(len(data))
    for layer, (keys, values) in zip(cache.layers, data, strict=True):
        layer.set(keys, values)
    return cache


def length(cache: Cache) -> int:
    return cache.layers[0].get_seq_length()


def left_pad(cache: Cache, amount: int) -> Cache:
    """The cache with `amount` empty (masked) positions in front."""
    if amount == 0:
        return cache
    padded = []
    for keys, values in tensors(cache):
        pad = keys.new_zeros((*keys.shape[:-2], amount, keys.shape[-1]))
        padded.append((torch.cat([pad, keys], dim=-2), torch.cat([pad, values], dim=-2)))
    return from_tensors(padded)


def join(caches: Sequence[Cache]) -> Cache:
    """Stack caches of equal length along the batch."""
    return from_tensors(
        [
            (torch.cat([k for k, _ in layer]), torch.cat([v for _, v in layer]))
            for layer in zip(*(tensors(c) for c in caches), strict=True)
        ]
    )


def select(cache: Cache, rows: Sequence[int], start: int = 0, end: int | None = None) -> Cache:
    """A copy of some rows, positions [start, end)."""
    index = torch.tensor(list(rows), dtype=torch.long, device=cache.layers[0].keys.device)
    return from_tensors(
        [
            (
                k.index_select(0, index)[..., start:end, :].contiguous(),
                v.index_select(0, index)[..., start:end, :].contiguous(),
            )
            for k, v in tensors(cache)
        ]
    )


def nbytes(cache: Cache) -> int:
    return sum(k.nelement() * k.element_size() * 2 for k, _ in tensors(cache))
