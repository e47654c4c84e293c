"""Two runs on the same episodes, compared episode by episode, with the noise of the comparison.

A difference in pass rate between two evaluations means little without its interval: the
same model evaluated twice with two sampling seeds already gains and loses episodes. This
reports what a reader needs to judge a difference:

- pass@1 of each run, averaged over each task's samples, then over the tasks both runs hold;
- the difference with a 95 % bootstrap interval that resamples whole families (a family's
  instances are alike, so treating them as independent would make the interval too narrow);
  a hand-written task is a family of its own;
- the episodes (task and sample index) that only one run passed, and the exact two-sided
  McNemar p-value over them.

Several runs of one recipe (training seeds) against one baseline: `compare_replicates`, their mean
difference with an interval that resamples the runs as well as the families.

Only complete grades count (an incomplete grade is neither a pass nor a fail).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gym.families import family_level
from gym.store import RolloutRow

RESAMPLES = 10_000


@dataclass(frozen=True)
class Paired:
    tasks: int  # tasks both runs hold a complete grade of
    families: int  # the clusters the bootstrap resamples
    pass_a: float
    pass_b: float
    difference: float  # pass_b - pass_a
    interval: tuple[float, float]  # 95 %, families resampled
    episodes: int  # (task, sample) pairs graded in both runs
    both: int
    only_a: int
    only_b: int
    mcnemar_p: float

    def line(self, a: str, b: str) -> str:
        low, high = self.interval
        return (
            f"{b} against {a} on {self.tasks} tasks ({self.families} families): pass@1 {self.pass_b:.1%} vs "
            f"{self.pass_a:.1%}, difference {self.difference:+.1%} (95% {low:+.1%} to {high:+.1%}, "
            f"families resampled); episodes passed only by {b}: {self.only_b}, only by {a}: "
            f"{self.only_a}, both: {self.both} (McNemar p = {self.mcnemar_p:.3g})"
        )


def outcomes(rows: Iterable[RolloutRow]) -> dict[tuple[str, int], bool]:
    """(task, sample) -> passed, for the complete grades among `rows`."""
    return {
        (r.task, r.sample): bool(r.passed)
        for r in rows
        if r.status == "done" and r.passed is not None and not r.incomplete
    }


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar test: a sign test on the discordant episodes."""
    n, k = only_a + only_b, min(only_a, only_b)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def compare(
    a: dict[tuple[str, int], bool],
    b: dict[tuple[str, int], bool],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Paired | None:
    """Run b against run a; None when they share no task."""
    rates = [_task_rates(run) for run in (a, b)]
    tasks = sorted(rates[0].keys() & rates[1].keys())
    if not tasks:
        return None
    groups = _family_sums(tasks, rates[0], rates[1])
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        picked = rng.choices(groups, k=len(groups))
        draws.append(sum(s for s, _ in picked) / sum(n for _, n in picked))
    common = a.keys() & b.keys()
    only_a = sum(a[e] and not b[e] for e in common)
    only_b = sum(b[e] and not a[e] for e in common)
    pass_a, pass_b = (sum(r[t] for t in tasks) / len(tasks) for r in rates)
    return Paired(
        tasks=len(tasks),
        families=len(groups),
        pass_a=pass_a,
        pass_b=pass_b,
        difference=pass_b - pass_a,
        interval=_central_95(draws),
        episodes=len(common),
        both=sum(a[e] and b[e] for e in common),
        only_a=only_a,
        only_b=only_b,
        mcnemar_p=mcnemar_p(only_a, only_b),
    )


@dataclass(frozen=True)
class Replicated:
    """Runs of one recipe (say, three training seeds) against one baseline run."""

    tasks: int  # tasks every run holds a complete grade of
    families: int
    runs: int
    differences: tuple[float, ...]  # each run's pass@1 minus the baseline's
    difference: float  # their mean
    interval: tuple[float, float]  # 95 %, families and runs resampled


def compare_replicates(
    a: dict[tuple[str, int], bool],
    runs: list[dict[tuple[str, int], bool]],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Replicated | None:
    """The mean gain of `runs` over run a, with an interval that resamples the families and, within each
    draw, the runs too: how far apart the training seeds land widens it (with few runs, crudely). None
    when the runs share no task with a and each other."""
    base = _task_rates(a)
    rates = [_task_rates(run) for run in runs]
    tasks = sorted(set(base).intersection(*rates))
    if not runs or not tasks:
        return None
    # Each run's (sum, count) per family, the families in one order for all runs.
    per_run = [_family_sums(tasks, base, r) for r in rates]
    counts = [n for _, n in per_run[0]]
    rng = random.Random(seed)
    draws = []
    for _ in range(resamples):
        picked_runs = rng.choices(per_run, k=len(per_run))
        picked = rng.choices(range(len(counts)), k=len(counts))
        total = sum(counts[f] for f in picked)
        draws.append(sum(sum(run[f][0] for f in picked) / total for run in picked_runs) / len(picked_runs))
    differences = tuple(sum(s for s, _ in run) / len(tasks) for run in per_run)
    return Replicated(
        tasks=len(tasks),
        families=len(counts),
        runs=len(runs),
        differences=differences,
        difference=sum(differences) / len(differences),
        interval=_central_95(draws),
    )


def _central_95(draws: list[float]) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the bootstrap's draws."""
    draws = sorted(draws)
    return draws[int(0.025 * len(draws))], draws[min(len(draws) - 1, int(0.975 * len(draws)))]


def _family_sums(tasks: list[str], a: dict[str, float], b: dict[str, float]) -> list[tuple[float, int]]:
    """Per family (the clusters the bootstraps resample), in order of first task: the sum of b - a over its
    tasks, and how many tasks it has."""
    clusters: dict[str, list[float]] = defaultdict(list)
    for task in tasks:
        at = family_level(task)
        clusters[at[0] if at else task].append(b[task] - a[task])
    return [(sum(d), len(d)) for d in clusters.values()]


def pass_at_1(run: dict[tuple[str, int], bool]) -> float:
    """A run's pass@1: the mean over its tasks of each task's samples' mean (as `compare` reports it)."""
    rates = _task_rates(run)
    return sum(rates.values()) / len(rates)


def _task_rates(run: dict[tuple[str, int], bool]) -> dict[str, float]:
    """pass@1 of each task: its samples' mean."""
    by_task: dict[str, list[bool]] = defaultdict(list)
    for (task, _), passed in run.items():
        by_task[task].append(passed)
    return {task: sum(p) / len(p) for task, p in by_task.items()}
