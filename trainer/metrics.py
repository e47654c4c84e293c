"""Per-step metrics: one JSON line per step, and Weights & Biases when configured."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from trainer.config import WandbConfig


class MetricsLog:
    def __init__(
        self, path: Path, wandb: WandbConfig | None = None, run_config: dict[str, Any] | None = None
    ):
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._wandb = _start_wandb(wandb, run_config, path.parent) if wandb and wandb.project else None

    def truncate_after(self, step: int) -> None:
        """Drop records of steps after `step` (they are redone when a run resumes from a checkpoint)."""
        if not self.path.exists():
            return
        kept = [
            line for line in self.path.read_text().splitlines() if line and json.loads(line)["step"] <= step
        ]
        self.path.write_text("".join(line + "\n" for line in kept))

    def log(self, record: dict[str, Any]) -> None:
        clean = {k: _jsonable(v) for k, v in record.items()}
        with self.path.open("a") as handle:
            handle.write(json.dumps(clean) + "\n")
        if self._wandb is not None:
            self._wandb.log(
                {k: v for k, v in clean.items() if isinstance(v, int | float)}, step=clean["step"]
            )

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def close(self) -> None:
        if self._wandb is not None:
            self._wandb.finish()


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


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
