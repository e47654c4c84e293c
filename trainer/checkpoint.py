"""Checkpoints that resume exactly: weights (or adapter), optimizer, scheduler, step, RNG, curriculum.

Layout of `<checkpoint dir>/step-000050/`:
    model/          save_pretrained output (the LoRA adapter, or the full model) + tokenizer:
                    loadable by transformers, peft and vLLM as it is; a full fine-tune's are its
                    float32 master weights (twice a bfloat16 copy, ~6 GB for 1.5B parameters),
                    which a resume needs to continue exactly
    trainer.pt      optimizer and scheduler state
    rng.pt          python, numpy and torch RNG states
    state.json      step, curriculum state, config

A checkpoint is written under a temporary name and renamed when complete, so
a crash mid-save never leaves a checkpoint that looks valid.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from core.errors import ConfigError
from trainer.seeding import rng_state, set_rng_state
from trainer.weights import import_weights, is_peft

PREFIX = "step-"


def checkpoint_path(root: Path, step: int) -> Path:
    return root / f"{PREFIX}{step:06d}"


def list_checkpoints(root: Path) -> list[Path]:
    """Complete checkpoints under `root`, oldest first."""
    if not root.is_dir():
        return []
    done = [
        p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and (p / "state.json").is_file()
    ]
    return sorted(done, key=lambda p: p.name)


def save_checkpoint(
    root: Path,
    step: int,
    *,
    model: Any,
    tokenizer: Any,
    learner_state: dict[str, Any],
    state: dict[str, Any],
    keep: int,
) -> Path:
    final = checkpoint_path(root, step)
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    _save_pretrained(model, tokenizer, tmp / "model")
    torch.save(learner_state, tmp / "trainer.pt")
    torch.save(rng_state(), tmp / "rng.pt")
    (tmp / "state.json").write_text(json.dumps({"step": step, **state}, indent=1))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in list_checkpoints(root)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _save_pretrained(model: Any, tokenizer: Any, folder: Path) -> None:
    """save_pretrained without transformers' progress bar on every checkpoint."""
    from transformers.utils import logging

    bar = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    finally:
        if bar:
            logging.enable_progress_bar()


def find_resume(root: Path, resume: str) -> Path | None:
    """The checkpoint to resume from: 'auto' = newest in root, 'never' = none, else the given folder."""
    if resume == "never":
        return None
    if resume == "auto":
        found = list_checkpoints(root)
        return found[-1] if found else None
    path = Path(resume)
    if not (path / "state.json").is_file():
        raise ConfigError(f"checkpoint.resume: {path} is not a complete checkpoint (no state.json)")
    return path


def load_checkpoint(path: Path, model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Load weights into `model` and restore global RNG; returns (learner state, state.json)."""
    load_model_weights(model, path / "model")
    learner_state = torch.load(path / "trainer.pt", weights_only=False)
    set_rng_state(torch.load(path / "rng.pt", weights_only=False))
    return learner_state, json.loads((path / "state.json").read_text())


def load_model_weights(model: Any, folder: Path) -> None:
    """Load save_pretrained output back into an already built model of the same shape."""
    from safetensors.torch import load_file

    files = sorted(folder.glob("adapter_model.safetensors" if is_peft(model) else "model*.safetensors"))
    if not files:
        raise ConfigError(f"{folder}: no safetensors weights to resume from")
    tensors: dict[str, torch.Tensor] = {}
    for file in files:
        tensors.update(load_file(str(file)))
    if is_peft(model):
        import_weights(model, tensors)
        return
    with torch.no_grad():
        result = model.load_state_dict(tensors, strict=False)
    loaded = {p.data_ptr() for name, p in model.state_dict().items() if name in tensors}
    missing = [k for k in result.missing_keys if model.state_dict()[k].data_ptr() not in loaded]
    if missing or result.unexpected_keys:
        raise ConfigError(
            f"{folder}: weights do not match the model (missing {missing[:3]}, "
            f"unexpected {result.unexpected_keys[:3]})"
        )
