"""Which tasks each step trains on: weighted by calibrated band, reproducible, resumable.

Bands come from `egym calibrate` (Task.band). The default weights favour the
`target` band (20-50% pass rate), where GRPO groups most often have mixed
rewards and so carry a learning signal; too-hard tasks, whose groups are all
zero, are left out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from core.errors import ConfigError


class Curriculum:
    def __init__(self, tasks: Sequence[Any], band_weights: dict[str, float], seed: int) -> None:
        self.pool = [(task, band_weights.get(task.band or "unbanded", 0.0)) for task in tasks]
        self.pool = [(task, w) for task, w in self.pool if w > 0]
        if not self.pool:
            named = ", ".join(f"{t.key} ({t.band or 'unbanded'})" for t in tasks[:8]) or "(no tasks)"
            more = f" and {len(tasks) - 8} more" if len(tasks) > 8 else ""
            folders = (
                " ".join(sorted({str(t.path) for t in tasks if getattr(t, "path", None)})[:3])
                or "tasks/<world>"
            )
            raise ConfigError(
                f"no training task has a band with weight > 0 in tasks.curriculum.band_weights: {named}{more}. "
                f"Recalibrate with a policy that sometimes succeeds (egym calibrate {folders} --policy P "
                f"--samples 8), or give those bands weight, e.g. tasks.curriculum.band_weights.too-hard=0.2"
            )
        self.rng = random.Random(seed)
        self.draws = 0

    def sample(self, k: int) -> list[Any]:
        """k tasks, without replacement when the pool is large enough (weighted, Efraimidis-Spirakis)."""
        self.draws += 1
        if k > len(self.pool):
            return self.rng.choices([t for t, _ in self.pool], weights=[w for _, w in self.pool], k=k)
        keyed = [(math.log(self.rng.random() or 1e-300) / w, i) for i, (_, w) in enumerate(self.pool)]
        chosen = sorted(keyed, reverse=True)[:k]
        return [self.pool[i][0] for _, i in chosen]

    def counts(self) -> dict[str, int]:
        """Tasks in the pool per band (for the run log)."""
        out: dict[str, int] = {}
        for task, _ in self.pool:
            out[task.band or "unbanded"] = out.get(task.band or "unbanded", 0) + 1
        return out

    def state_dict(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {"rng": [version, list(internal), gauss], "draws": self.draws}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.draws = state["draws"]
