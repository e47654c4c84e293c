"""Which tasks each step trains on: weighted by difficulty band, moving up a family's levels as it learns.

A task's band starts as its calibrated one (`egym calibrate`; a family instance carries its
family level's band). The default weights favour the `target` band (20-50 % pass rate), where
GRPO groups most often have mixed rewards and so carry a learning signal; too-hard tasks, whose
groups are all zero, are left out.

As training goes on the curriculum watches the pass rate of each family level (and of each
plain task) over its last `window` rollouts. Once `min_observed` rollouts are seen, that live
pass rate decides the band instead of the calibrated one: a level the policy has learned becomes
`too-easy` and is sampled less. When a level's live pass rate reaches `promote_at`, the family's
next level joins the learning zone (at least the `target` weight) until its own rollouts say
where it stands: the curriculum moves up as the pass rate rises, without a recalibration.

Sampling is reproducible from the seed and resumes exactly (the rng and the windows are state).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Sequence
from typing import Any

from core.errors import ConfigError


def _band(pass_rate: float) -> str:
    """The cut-offs of gym.calibrate.band_for (the trainer does not import gym)."""
    if pass_rate > 0.5:
        return "too-easy"
    if pass_rate >= 0.2:
        return "target"
    return "hard" if pass_rate >= 0.05 else "too-hard"


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
        promote_at: float = 0.5,
        window: int = 32,
        min_observed: int = 8,
    ) -> None:
        self.tasks = list(tasks)
        self.band_weights = band_weights
        self.promote_at, self.window, self.min_observed = promote_at, window, min_observed
        self.units = [unit_of(t) for t in self.tasks]
        self.index = {t.key: i for i, t in enumerate(self.tasks)}
        self.levels: dict[str, list[int]] = {}
        for name, level in self.units:
            if level is not None:
                self.levels.setdefault(name, []).append(level)
        self.levels = {name: sorted(set(levels)) for name, levels in self.levels.items()}
        self.passes: dict[str, deque[bool]] = {}
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
        return _band(rate) if rate is not None else (self.tasks[index].band or "unbanded")

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

    def _refuse(self) -> None:
        tasks = self.tasks
        named = ", ".join(f"{t.key} ({t.band or 'unbanded'})" for t in tasks[:8]) or "(no tasks)"
        more = f" and {len(tasks) - 8} more" if len(tasks) > 8 else ""
        folders = (
            " ".join(sorted({str(t.path) for t in tasks if getattr(t, "path", None)})[:3]) or "tasks/<world>"
        )
        raise ConfigError(
            f"no training task has a band with weight > 0 in tasks.curriculum.band_weights: {named}{more}. "
            f"Recalibrate with a policy that sometimes succeeds (egym calibrate {folders} --policy P "
            f"--samples 8), or give those bands weight, e.g. tasks.curriculum.band_weights.too-hard=0.2"
        )
