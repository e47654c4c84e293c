"""Difficulty calibration: pass rate with a Wilson interval, and the band the curriculum samples by.

Bands are decided by the pass-rate point estimate p (pass = normalized score
>= the task's `pass_threshold`), with these cut-offs:

| band       | pass rate p      | why                                                        |
| ---------- | ---------------- | ---------------------------------------------------------- |
| `too-hard` | p < 5%           | almost never solved: GRPO groups are all-fail, no signal   |
| `hard`     | 5% <= p < 20%    | solved now and then: useful late in a curriculum           |
| `target`   | 20% <= p <= 50%  | the most learning signal per rollout                       |
| `too-easy` | p > 50%          | mostly solved already                                      |

The Wilson 95% interval says how much to trust p; `confident` is true when
the whole interval lies inside the band. Incomplete grades (an item could not
be checked) are left out unless `include_incomplete` is set. A band is written
to task.yaml (with its interval) only from at least `min_samples` complete
grades: from 4 samples a 0/4 says little (its interval reaches 49%). A family's
instances are measured together per level (`acme/product-price L0`) and the band is
written to the family folder's bands.yaml, which every instance of that level carries.

A band holds for the model it was measured with, so it is written under that model's key
(gym.models.identity: `hf:smollm2@1a2b3c4d5e6f`, `openai:gpt-4o-mini@api.openai.com/v1`,
`oracle`) beside other models' bands, with the policy, sample count, interval and date.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from gym.tasks import Band, BandEvidence

Z95 = 1.959963984540054
MIN_SAMPLES = 8
# Each band's [low, high] pass-rate range; `too-easy` excludes 0.5 itself (see band_for).
BAND_RANGES: dict[Band, tuple[float, float]] = {
    "too-hard": (0.0, 0.05),
    "hard": (0.05, 0.2),
    "target": (0.2, 0.5),
    "too-easy": (0.5, 1.0),
}


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n == 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def band_for(pass_rate: float) -> Band:
    """The band of a pass rate, by the cut-offs in the module docstring."""
    if pass_rate > 0.5:
        return "too-easy"
    if pass_rate >= 0.2:
        return "target"
    if pass_rate >= 0.05:
        return "hard"
    return "too-hard"


@dataclass(frozen=True)
class Score:
    """One graded rollout, as calibration sees it."""

    normalized: float
    incomplete: bool = False


@dataclass(frozen=True)
class Calibration:
    task: str
    samples: int  # rollouts counted
    excluded: int  # incomplete grades left out
    mean: float | None  # mean normalized score
    passes: int
    pass_rate: float | None
    low: float
    high: float
    band: Band | None
    model: str = ""  # the model key the band is stored under (gym.models.identity)

    @property
    def confident(self) -> bool:
        """The whole 95% interval lies inside the assigned band."""
        if self.band is None:
            return False
        lo, hi = BAND_RANGES[self.band]
        return lo <= self.low and self.high <= hi


def calibrate_scores(
    task: str, scores: Iterable[Score], threshold: float, *, include_incomplete: bool = False
) -> Calibration:
    """Mean score, pass rate, Wilson interval and band of one task's graded rollouts."""
    scores = list(scores)
    kept = [s for s in scores if include_incomplete or not s.incomplete]
    n = len(kept)
    passes = sum(s.normalized >= threshold for s in kept)
    low, high = wilson_interval(passes, n)
    rate = passes / n if n else None
    return Calibration(
        task=task,
        samples=n,
        excluded=len(scores) - n,
        mean=sum(s.normalized for s in kept) / n if n else None,
        passes=passes,
        pass_rate=rate,
        low=low,
        high=high,
        band=band_for(rate) if rate is not None else None,
    )


def calibration_units(tasks) -> dict[str, list]:
    """What a band is measured for: a plain task alone, a family's instances by level (`acme/x L0`).

    One instance's few samples say little; the instances of a family level share a template, so
    their rollouts are pooled and the band is stored for the level (families/bands.yaml).
    """
    from gym.families import family_level

    units: dict[str, list] = {}
    for task in tasks:
        parts = family_level(task.key)
        units.setdefault(f"{parts[0]} L{parts[1]}" if parts else task.key, []).append(task)
    return units


async def calibrate_run(
    store,
    req,
    executor,
    *,
    include_incomplete: bool = False,
    write: bool = True,
    min_samples: int = MIN_SAMPLES,
    max_samples: int | None = None,
    progress=None,
) -> list[Calibration]:
    """Run (or resume) the calibration batch `req`, then compute each unit's band; save it when well measured.

    With `max_samples`, a unit whose interval does not yet sit inside one band gets another round of
    `req.samples` rollouts per task, until it does or its tasks have `max_samples` each: settled units
    stop early, and the rounds are one run (rerunning the command resumes it).
    """
    import datetime as dt

    from gym.batch import run_batch
    from gym.batch.runner import default_run_id
    from gym.policies import model_key

    model = model_key(req.policy, {**req.policy_options, **({"model": req.model} if req.model else {})})
    req = replace(req, run_id=req.run_id or default_run_id(req))
    measured: dict[str, Calibration] = {}
    units = pending = calibration_units(req.tasks)
    samples = req.samples
    while pending:
        batch = replace(req, tasks=[t for tasks in pending.values() for t in tasks], samples=samples)
        rows = (await run_batch(store, batch, executor, progress)).rows
        for unit, tasks in pending.items():
            keys = {t.key for t in tasks}
            scores = [
                Score(r.reward, bool(r.incomplete))
                for r in rows
                if r.task in keys and r.status == "done" and r.reward is not None
            ]
            cal = calibrate_scores(
                unit, scores, tasks[0].pass_threshold, include_incomplete=include_incomplete
            )
            measured[unit] = replace(cal, model=model)
        samples += req.samples
        unsettled = {u: tasks for u, tasks in pending.items() if not measured[u].confident}
        pending = unsettled if max_samples is not None and samples <= max_samples else {}
    out = []
    for unit, tasks in units.items():
        cal = measured[unit]
        if write and cal.band is not None and cal.samples >= min_samples:
            policy = req.policy + (f" {_shown_model(req.model)}" if req.model else "")
            evidence = BandEvidence(
                pass_rate=cal.pass_rate or 0.0,
                interval=(cal.low, cal.high),
                samples=cal.samples,
                policy=policy,
                date=dt.date.today(),
            )
            _save(tasks, model, cal.band, evidence)
        out.append(cal)
    return out


def _shown_model(model: str) -> str:
    """The model as a shipped bands file should name it: a folder under the working directory relative to
    it (another machine has no /home/me/...), anything else as given (a hub name, an endpoint)."""
    path, here = Path(model).expanduser(), Path.cwd().resolve()
    if path.is_absolute() and path.exists() and path.resolve().is_relative_to(here):
        return str(path.resolve().relative_to(here))
    return model


def _save(tasks, model: str, band: Band, evidence: BandEvidence) -> None:
    from gym.families import families, family_level, save_family_band
    from gym.tasks import save_band
    from gym.worlds import world_dir

    parts = family_level(tasks[0].key)
    if parts is None:
        save_band(tasks[0], model, band, evidence)
        return
    world, name = parts[0].split("/")
    save_family_band(families(world_dir(world))[name], parts[1], model, band, evidence)


def calibration_table(results: list[Calibration], *, written: bool = False, min_samples: int = MIN_SAMPLES):
    """A rich table: samples, mean score, pass rate with its interval, band (and whether it was written)."""
    from rich.table import Table

    models = sorted({c.model for c in results if c.model})
    title = f"calibration of model {', '.join(models)}" if models else "calibration"
    title += (
        f" (bands from >= {min_samples} samples written to task.yaml, family levels to families/bands.yaml)"
        if written
        else " (dry run: nothing written)"
    )
    table = Table(title=title, title_justify="left")
    for name in ("task", "n", "excluded", "mean", "pass", "95% CI", "band", "confident"):
        table.add_column(name, justify="left" if name in ("task", "band") else "right")
    for c in results:
        band = c.band or "[yellow]none (no complete grades)[/]"
        if c.band and written and c.samples < min_samples:
            band = f"{c.band} [yellow](not written: {c.samples} < {min_samples} samples)[/]"
        table.add_row(
            c.task,
            str(c.samples),
            str(c.excluded),
            f"{c.mean:.3f}" if c.mean is not None else "-",
            f"{c.passes}/{c.samples} ({c.pass_rate:.0%})" if c.pass_rate is not None else "-",
            f"{c.low:.0%}-{c.high:.0%}",
            band,
            "yes" if c.confident else "no",
        )
    return table
