"""Per-step metrics: one JSON line per step, and Weights & Biases and TensorBoard when configured.

The JSONL is the record the dashboard reads; the trackers get its numbers, nested
ones under their path (`bands/target`). TensorBoard's event files go next to the
JSONL, so `tensorboard --logdir runs` shows every run under its folder name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from trainer.config import LoggingConfig, WandbConfig


class MetricsLog:
    def __init__(self, out_dir: Path, config: LoggingConfig, run_config: dict[str, Any] | None = None):
        self.path = out_dir / config.metrics_file
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.config = config
        self._wandb = _start_wandb(config.wandb, run_config, out_dir) if config.wandb.project else None
        self._tensorboard: Any = None

    def start(self, after_step: int) -> None:
        """Log the steps after `after_step` (0: a fresh run). A resumed run redoes the steps after its
        checkpoint: their JSONL records are dropped, and TensorBoard hides its events from them on."""
        if self.path.exists():
            kept = [
                line
                for line in self.path.read_text().splitlines()
                if line and json.loads(line)["step"] <= after_step
            ]
            self.path.write_text("".join(line + "\n" for line in kept))
        if self.config.tensorboard:
            self._tensorboard = _start_tensorboard(self.path.parent, after_step + 1)

    def log(self, record: dict[str, Any]) -> None:
        clean = {k: _jsonable(v) for k, v in record.items()}
        with self.path.open("a") as handle:
            handle.write(json.dumps(clean) + "\n")
        numbers = dict(scalars(clean))
        if self._wandb is not None:
            self._wandb.log(numbers, step=clean["step"])
        if self._tensorboard is not None:
            for tag, value in numbers.items():
                self._tensorboard.add_scalar(tag, value, global_step=clean["step"])
            self._tensorboard.flush()  # a step takes seconds to minutes: show it now

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def close(self) -> None:
        if self._wandb is not None:
            self._wandb.finish()
        if self._tensorboard is not None:
            self._tensorboard.close()


def scalars(record: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    """The record's numbers as (tag, value), nested mappings as `outer/inner`; `step` is the axis, not a value."""
    for key, value in record.items():
        tag = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from scalars(value, f"{tag}/")
        elif isinstance(value, int | float) and not isinstance(value, bool) and tag != "step":
            yield tag, value


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _start_tensorboard(out_dir: Path, first_step: int) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ConfigError(
            "logging.tensorboard is true but tensorboard is not installed: "
            "pip install 'enterprise-gym[tensorboard]'"
        ) from None
    return SummaryWriter(log_dir=str(out_dir), purge_step=first_step)


def _start_wandb(config: WandbConfig, run_config: dict[str, Any] | None, out_dir: Path) -> Any:
    try:
        import wandb
    except ImportError:
        raise ConfigError(
            "logging.wandb.project is set but wandb is not installed: pip install wandb"
        ) from None
    return wandb.init(
        project=config.project,
        entity=config.entity,
        name=config.run_name or out_dir.name,
        mode=config.mode,
        config=run_config or {},
        dir=str(out_dir),
        resume="allow",
    )
