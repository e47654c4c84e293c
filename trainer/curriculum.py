"""Which tasks each step trains on: weighted by difficulty band, moving up a family's levels as it learns.

A task's band starts as its calibrated one for the model being trained (`egym calibrate` stores
one band per model key, gym.models.identity; a family instance carries its family level's bands).
A task with no band for that model is `unbanded`, and the run log says so once, naming the models
that do have bands: a band measured on another model says little about this one. The default
weights favour the `target` band (20-50 % pass rate), where GRPO groups most often have mixed
rewards and so carry a learning signal; too-hard tasks, whose groups are all zero, keep only a
small floor weight (the config refuses 0 for them).

As training goes on the curriculum watches the pass rate of each family level (and of each
plain task) over its last `window` rollouts. Once `min_observed` rollouts are seen, that live
pass rate decides the band instead of the calibrated one: a level the policy has learned becomes
`too-easy` and is sampled less. When a level's live pass rate reaches `promote_at`, the family's
next level joins the learning zone (at least the `target` weight) until its own rollouts say
where it stands: the curriculum moves up as the pass rate rises, without a recalibration.
A level whose live rate falls to too-hard (at a 10 % pass rate, 8 failures in a row happen 43 %
of the time) is still drawn at the floor weight, so its window keeps filling, and a live pass rate
of 5 % moves it back to `hard`: bands follow the pass rate both ways. The trainer logs them per
step (`level_bands`, `band_moves`).

Sampling is reproducible from the seed and resumes exactly (the rng and the windows are state).
"""

from __future__ import annotations

import logging
import math
import random
from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

from core.errors import ConfigError
from gym.calibrate import BAND_RANGES, band_for

log = logging.getLogger(__name__)

BANDS = (*BAND_RANGES, "unbanded")  # hardest first, as the dashboard draws them


def band_moves(before: dict[str, str], after: dict[str, str]) -> dict[str, Any]:
    """A step's record of the curriculum: how many levels are in each band after it, and which moved.

    Counts go in every step's metrics line; moves only name the levels that changed band, so a
    long run over a large library stays a small file.
    """
    counts = Counter(after.values())
    return {
        "bands": {band: counts[band] for band in BANDS},
        "band_changes": [
            {"level": level, "from": before[level], "to": band}
            for level, band in after.items()
            if before[level] != band
        ],
    }


def unit_of(task: Any) -> tuple[str, int | None]:
    """(family, level) for a family instance (tags `family:x`, `level:n`), else (task key, None)."""
    tags = dict(t.split(":", 1) for t in getattr(task, "tags", []) or [] if ":" in t)
    if "family" in tags and tags.get("level", "").isdigit():
        return f"{task.key.split('/')[0]}/{tags['family']}", int(tags["level"])
    return task.key, None


class Curriculum:
    def __init__(
        self,
        tasks: Sequence[Any],
        band_weights: dict[str, float],
        seed: int,
        *,
        model: str,
        promote_at: float = 0.5,
        window: int = 32,
        min_observed: int = 8,
    ) -> None:
        self.tasks = list(tasks)
        self.band_weights = band_weights
        self.promote_at, self.window, self.min_observed = promote_at, window, min_observed
        self.model = model
        self.units = [unit_of(t) for t in self.tasks]
        self.calibrated: list[str | None] = [
            entry.band if (entry := t.bands.get(model)) is not None else None for t in self.tasks
        ]
        self.index = {t.key: i for i, t in enumerate(self.tasks)}
        self.levels: dict[str, list[int]] = {}
        for name, level in self.units:
            if level is not None:
                self.levels.setdefault(name, []).append(level)
        self.levels = {name: sorted(set(levels)) for name, levels in self.levels.items()}
        self.passes: dict[str, deque[bool]] = {}
        if None in self.calibrated:
            log.warning(self._unbanded_note())
        if not any(w > 0 for w in self.weights()):
            self._refuse()
        self.rng = random.Random(seed)
        self.draws = 0

    # -- what the live pass rates say ------------------------------------

    @staticmethod
    def _key(unit: tuple[str, int | None]) -> str:
        name, level = unit
        return name if level is None else f"{name} L{level}"

    def live_rate(self, unit: tuple[str, int | None]) -> float | None:
        seen = self.passes.get(self._key(unit))
        return sum(seen) / len(seen) if seen is not None and len(seen) >= self.min_observed else None

    def band(self, index: int) -> str:
        """The band task `index` is sampled by: its live one once observed enough, else its calibrated one."""
        rate = self.live_rate(self.units[index])
        return band_for(rate) if rate is not None else (self.calibrated[index] or "unbanded")

    def level_bands(self) -> dict[str, str]:
        """The band of each family level ("acme/price L0") and plain task, as `band` gives its tasks."""
        return {self._key(unit): self.band(index) for index, unit in enumerate(self.units)}

    def weights(self) -> list[float]:
        out = []
        for index, (name, level) in enumerate(self.units):
            weight = self.band_weights.get(self.band(index), 0.0)
            if level is not None and self.live_rate((name, level)) is None:
                below = [lv for lv in self.levels[name] if lv < level]
                rate = self.live_rate((name, below[-1])) if below else None
                if rate is not None and rate >= self.promote_at:
                    weight = max(weight, self.band_weights.get("target", 1.0))  # promoted
            out.append(weight)
        return out

    def observe(self, task_key: str, passes: Sequence[bool | None]) -> None:
        """Record a group's outcomes (None: an incomplete grade, not counted)."""
        index = self.index.get(task_key)
        if index is None:
            return
        seen = self.passes.setdefault(self._key(self.units[index]), deque(maxlen=self.window))
        seen.extend(bool(p) for p in passes if p is not None)

    def status(self) -> dict[str, float]:
        """Live pass rate per family level / task with enough rollouts (for the run log)."""
        return {
            key: sum(seen) / len(seen)
            for key, seen in sorted(self.passes.items())
            if len(seen) >= self.min_observed
        }

    # -- sampling -------------------------------------------------------------

    def sample(self, k: int) -> list[Any]:
        """k tasks, without replacement when the pool is large enough (weighted, Efraimidis-Spirakis)."""
        self.draws += 1
        pool = [(task, w) for task, w in zip(self.tasks, self.weights(), strict=True) if w > 0]
        if not pool:  # every level learned (or failed) past its weight: keep training on all, evenly
            pool = [(task, 1.0) for task in self.tasks]
        if k > len(pool):
            return self.rng.choices([t for t, _ in pool], weights=[w for _, w in pool], k=k)
        keyed = [(math.log(self.rng.random() or 1e-300) / w, i) for i, (_, w) in enumerate(pool)]
        chosen = sorted(keyed, reverse=True)[:k]
        return [pool[i][0] for _, i in chosen]

    def counts(self) -> dict[str, int]:
        """Tasks with weight > 0 per band (for the run log)."""
        out: dict[str, int] = {}
        for index, weight in enumerate(self.weights()):
            if weight > 0:
                out[self.band(index)] = out.get(self.band(index), 0) + 1
        return out

    def state_dict(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {
            "rng": [version, list(internal), gauss],
            "draws": self.draws,
            "passes": {key: list(seen) for key, seen in self.passes.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.draws = state["draws"]
        self.passes = {key: deque(seen, maxlen=self.window) for key, seen in state.get("passes", {}).items()}

    def _unbanded_note(self) -> str:
        """Which tasks have no band for the trained model, and which models do have bands."""
        missing = self.calibrated.count(None)
        others: dict[str, int] = {}
        for task in self.tasks:
            for key in task.bands:
                others[key] = others.get(key, 0) + 1
        where = (
            "bands exist for " + ", ".join(f"{key} ({n} tasks)" for key, n in sorted(others.items()))
            if others
            else "no task has a band for any model yet"
        )
        return (
            f"curriculum: {missing} of {len(self.tasks)} training tasks have no band for model {self.model} "
            f"and are sampled as unbanded; {where}. Calibrate this model: egym calibrate <tasks> --policy hf "
            f"--model <model.path>"
        )

    def _refuse(self) -> None:
        tasks = self.tasks
        named = (
            ", ".join(
                f"{t.key} ({band or 'unbanded'})" for t, band in zip(tasks[:8], self.calibrated, strict=False)
            )
            or "(no tasks)"
        )
        more = f" and {len(tasks) - 8} more" if len(tasks) > 8 else ""
        band = (self.calibrated[0] if tasks else None) or "unbanded"  # every task's band has weight 0 here
        folders = (
            " ".join(sorted({str(t.path) for t in tasks if getattr(t, "path", None)})[:3]) or "tasks/<world>"
        )
        raise ConfigError(
            f"no training task has a band with weight > 0 in tasks.curriculum.band_weights for model "
            f"{self.model}: {named}{more}. Recalibrate with a policy that sometimes succeeds (egym calibrate "
            f"{folders} --policy P --samples 8), or give those bands weight, e.g. "
            f"tasks.curriculum.band_weights.{band}=0.2"
        )
