"""Where a model computes: the best device here, and mixed precision over float32 weights.

A model being fine-tuned in full keeps float32 weights, since AdamW on bfloat16
weights rounds small updates away, and computes in a narrower dtype under
torch.autocast. The trainer marks such a model (`set_compute_dtype`); the
learner and the inference engine that share it run every forward pass in
`computing(model)`.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from core.errors import PolicyError

_COMPUTE_DTYPE = "egym_compute_dtype"  # the attribute that marks a model


def best_device() -> torch.device:
    """The current CUDA device when there is a GPU, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def parse_device(name: str | None) -> torch.device:
    """A device option ('cpu', 'cuda', 'cuda:1', ...) as a torch.device; None means the best here."""
    if name is None:
        return best_device()
    try:
        return torch.device(name)
    except RuntimeError:
        raise PolicyError(f"device {name!r} is not a torch device (cpu, cuda, cuda:1, ...)") from None


def set_compute_dtype(model: Any, dtype: torch.dtype) -> None:
    """Run `model`'s forward passes in `dtype` (its weights stay as they are)."""
    setattr(model, _COMPUTE_DTYPE, dtype)


def compute_dtype(model: Any) -> torch.dtype | None:
    """The dtype set by set_compute_dtype, or None when the model computes in its weights' dtype."""
    return getattr(model, _COMPUTE_DTYPE, None)


def computing(model: Any) -> contextlib.AbstractContextManager:
    """The context for `model`'s forward passes: autocast to its compute dtype, if it has one."""
    dtype = compute_dtype(model)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(next(model.parameters()).device.type, dtype=dtype)
