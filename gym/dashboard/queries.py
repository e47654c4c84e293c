"""Read-only queries over the run store's tables, shaped for the dashboard's pages.

Aggregates (counts, means, pass rates, histogram bins, item pass rates) are
computed in SQL with GROUP BY, and lists are paged with LIMIT/OFFSET, so a
page costs the same with 100 or 100,000 rollouts in the store. Trajectories
(the large JSON column) are only read for the one rollout being shown.

Pass rate in the tables follows `Store.run_stats` (passed rollouts over done
rollouts that have a score); the calibration history follows `egym
calibrate` (complete grades only, Wilson 95% interval, band cut-offs).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from sqlalchemy import Integer, case, cast, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from gym.batch.report import FamilyScores, family_scores
from gym.calibrate import band_for, wilson_interval
from gym.families import family_level
from gym.store import ItemResultRow, RolloutRow, RunRow

T = TypeVar("T")
HISTOGRAM_BINS = 10


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list; `page` counts from 1."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))


@dataclass(frozen=True)
class Stats:
    """Counts and scores over a group of rollouts (a run, a task, a task within a run)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    scored: int = 0
    passed: int = 0
    mean_reward: float | None = None
    mean_seconds: float | None = None
    incomplete: int = 0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None

    complete: int = 0
    complete_passed: int = 0

    @property
    def calibration(self) -> Calibration:
        """Pass rate, Wilson 95% interval and band as `egym calibrate` computes them (complete grades only)."""
        return calibrate_counts(self.complete_passed, self.complete)


@dataclass(frozen=True)
class Calibration:
    passes: int
    n: int
    pass_rate: float | None
    low: float
    high: float
    band: str | None


def calibrate_counts(passes: int, n: int) -> Calibration:
    low, high = wilson_interval(passes, n)
    rate = passes / n if n else None
    return Calibration(passes, n, rate, low, high, band_for(rate) if rate is not None else None)


@dataclass(frozen=True)
class RunSummary:
    run: RunRow
    stats: Stats
    started: dt.datetime | None
    finished: dt.datetime | None

    @property
    def duration(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None


@dataclass(frozen=True)
class HistoryPoint:
    """A task's pass rate in one run (its calibration history)."""

    run_id: str
    created_at: dt.datetime
    policy: str
    model: str | None
    stats: Stats


@dataclass(frozen=True)
class ItemRate:
    item_id: str
    description: str
    section: str | None
    kind: str
    points: int
    graded: int
    passed: int
    errors: int

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


def _flag(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.sum(case((condition, 1), else_=0))


_DONE = RolloutRow.status == "done"
_COMPLETE = _DONE & RolloutRow.reward.is_not(None) & ~func.coalesce(RolloutRow.incomplete, False)
# Columns of a Stats row, in the order `_stats` reads them.
_STATS_COLUMNS = (
    func.count(),
    _flag(_DONE),
    _flag(RolloutRow.status == "failed"),
    func.sum(case((_DONE & RolloutRow.reward.is_not(None), 1), else_=0)),
    func.sum(case((_DONE, cast(RolloutRow.passed, Integer)), else_=0)),
    func.avg(case((_DONE, RolloutRow.reward))),
    func.avg(case((_DONE, RolloutRow.seconds))),
    func.sum(case((_DONE, cast(RolloutRow.incomplete, Integer)), else_=0)),
    _flag(_COMPLETE),
    func.sum(case((_COMPLETE, cast(RolloutRow.passed, Integer)), else_=0)),
)
N_STATS = len(_STATS_COLUMNS)


def _stats(values: Sequence[Any]) -> Stats:
    total, done, failed, scored, passed, mean, secs, incomplete, complete, complete_passed = values
    return Stats(
        total or 0,
        done or 0,
        failed or 0,
        scored or 0,
        passed or 0,
        None if mean is None else float(mean),
        None if secs is None else float(secs),
        incomplete or 0,
        complete or 0,
        complete_passed or 0,
    )


def _offset(page: int, per_page: int) -> int:
    return (max(page, 1) - 1) * per_page


# -- runs -----------------------------------------------------------------


def run_kinds(s: Session) -> list[str]:
    return list(s.scalars(select(RunRow.kind).group_by(RunRow.kind).order_by(RunRow.kind)))


def run_page(s: Session, page: int, per_page: int, *, kind: str | None = None) -> Page[RunSummary]:
    """Runs, newest first, each with its aggregate stats (one grouped query for the whole page)."""
    where = [RunRow.kind == kind] if kind else []
    total = s.scalar(select(func.count()).select_from(RunRow).where(*where)) or 0
    runs = list(
        s.scalars(
            select(RunRow)
            .where(*where)
            .order_by(RunRow.created_at.desc(), RunRow.id)
            .limit(per_page)
            .offset(_offset(page, per_page))
        )
    )
    rows = s.execute(
        select(
            RolloutRow.run_id,
            *_STATS_COLUMNS,
            func.min(RolloutRow.started_at),
            func.max(RolloutRow.finished_at),
        )
        .where(RolloutRow.run_id.in_([r.id for r in runs]))
        .group_by(RolloutRow.run_id)
    ).all()
    by_run = {row[0]: row for row in rows}
    items = []
    for run in runs:
        row = by_run.get(run.id)
        stats = _stats(row[1 : N_STATS + 1]) if row else Stats()
        items.append(
            RunSummary(run, stats, row[N_STATS + 1] if row else None, row[N_STATS + 2] if row else None)
        )
    return Page(items, page, per_page, total)


def run_summary(s: Session, run_id: str) -> RunSummary | None:
    run = s.get(RunRow, run_id)
    if run is None:
        return None
    row = s.execute(
        select(*_STATS_COLUMNS, func.min(RolloutRow.started_at), func.max(RolloutRow.finished_at)).where(
            RolloutRow.run_id == run_id
        )
    ).one()
    return RunSummary(run, _stats(row[:N_STATS]), row[N_STATS], row[N_STATS + 1])


def task_table(s: Session, run_id: str | None = None) -> list[tuple[str, Stats]]:
    """Per-task stats, within one run or over the whole store, sorted by task key."""
    query = select(RolloutRow.task, *_STATS_COLUMNS).group_by(RolloutRow.task).order_by(RolloutRow.task)
    if run_id is not None:
        query = query.where(RolloutRow.run_id == run_id)
    return [(row[0], _stats(row[1:])) for row in s.execute(query)]


def family_levels(s: Session, run_id: str) -> list[FamilyScores]:
    """Per family level of a run: instances solved, consistency, pass rate (empty: no family instances)."""
    query = select(RolloutRow.task, RolloutRow.status, RolloutRow.reward, RolloutRow.passed).where(
        RolloutRow.run_id == run_id, RolloutRow.task.like("%-l%-s%")
    )
    return family_scores(s.execute(query))


def score_histogram(
    s: Session, *, run_id: str | None = None, task: str | None = None, bins: int = HISTOGRAM_BINS
) -> tuple[list[int], list[float]]:
    """Counts of done rollouts' rewards in `bins` equal bins over [0, 1] (1.0 falls in the last bin)."""
    edges = [i / bins for i in range(bins + 1)]
    bucket = case(*[(RolloutRow.reward < edges[i + 1], i) for i in range(bins - 1)], else_=bins - 1)
    # `done` is counted inside the aggregate, not filtered in WHERE: with it in WHERE SQLite picks the
    # (unselective) status index over the run/task index and reads every rollout in the store.
    query = select(bucket, _flag(_DONE)).where(RolloutRow.reward.is_not(None)).group_by(bucket)
    if run_id is not None:
        query = query.where(RolloutRow.run_id == run_id)
    if task is not None:
        query = query.where(RolloutRow.task == task)
    counts = [0] * bins
    for index, count in s.execute(query):
        counts[int(index)] = count
    return counts, edges


_LIST_COLUMNS = (
    RolloutRow.id,
    RolloutRow.run_id,
    RolloutRow.task,
    RolloutRow.sample,
    RolloutRow.step,
    RolloutRow.status,
    RolloutRow.reward,
    RolloutRow.earned,
    RolloutRow.possible,
    RolloutRow.passed,
    RolloutRow.incomplete,
    RolloutRow.seconds,
    RolloutRow.turns,
    RolloutRow.stop_reason,
    RolloutRow.error,
)


def training_runs(s: Session, output_dir: Path) -> list[tuple[str, int]]:
    """The store's runs (id, rollouts) that hold a training run's rollouts: those whose output folder it is."""
    runs = s.scalars(select(RunRow).where(RunRow.kind == "train").order_by(RunRow.id)).all()
    found = []
    for run in runs:
        folder = (run.config or {}).get("output_dir")
        if folder and Path(folder).resolve() == output_dir.resolve():
            count = s.scalar(select(func.count()).where(RolloutRow.run_id == run.id)) or 0
            found.append((run.id, count))
    return found


def rollout_page(
    s: Session,
    page: int,
    per_page: int,
    *,
    run_id: str | None = None,
    task: str | None = None,
    status: str | None = None,
    step: int | None = None,
) -> Page[Any]:
    """Rollout rows without their trajectories, ordered by task and sample (run: newest first)."""
    filters = (
        (RolloutRow.run_id, run_id),
        (RolloutRow.task, task),
        (RolloutRow.status, status),
        (RolloutRow.step, step),
    )
    where = [c == v for c, v in filters if v is not None]
    total = s.scalar(select(func.count()).select_from(RolloutRow).where(*where)) or 0
    order = (RunRow.created_at.desc(), RolloutRow.task, RolloutRow.sample)
    # Sort and cut on the narrow key columns first, then read the page's rows: the score columns sit
    # after the trajectory JSON in each row, so reading them for every candidate would be slow.
    ids = (
        select(RolloutRow.id)
        .join(RunRow)
        .where(*where)
        .order_by(*order)
        .limit(per_page)
        .offset(_offset(page, per_page))
        .scalar_subquery()
    )
    query = select(*_LIST_COLUMNS).join(RunRow).where(RolloutRow.id.in_(ids)).order_by(*order)
    return Page(list(s.execute(query)), page, per_page, total)


# -- tasks ----------------------------------------------------------------


def task_history(s: Session, task: str) -> list[HistoryPoint]:
    """The task's stats per run, oldest run first: its calibration history."""
    rows = s.execute(
        select(RunRow.id, RunRow.created_at, RunRow.policy, RunRow.model, *_STATS_COLUMNS)
        .join(RolloutRow, RolloutRow.run_id == RunRow.id)
        .where(RolloutRow.task == task)
        .group_by(RunRow.id, RunRow.created_at, RunRow.policy, RunRow.model)
        .order_by(RunRow.created_at, RunRow.id)
    ).all()
    return [HistoryPoint(r[0], r[1], r[2], r[3], _stats(r[4:])) for r in rows]


def item_rates(s: Session, task: str, run_id: str | None = None) -> list[ItemRate]:
    """Each rubric item's pass rate over the task's done rollouts, most-failed first."""
    # `done` is tested inside the aggregates for the index reason given in score_histogram.
    query = (
        select(
            ItemResultRow.item_id,
            func.max(ItemResultRow.description),
            func.max(ItemResultRow.section),
            func.max(ItemResultRow.kind),
            func.max(ItemResultRow.points),
            _flag(_DONE),
            _flag(_DONE & (ItemResultRow.status == "pass")),
            _flag(_DONE & (ItemResultRow.status == "error")),
            func.min(ItemResultRow.position),
        )
        .join(RolloutRow, RolloutRow.id == ItemResultRow.rollout_id)
        .where(RolloutRow.task == task)
        .group_by(ItemResultRow.item_id)
        .having(_flag(_DONE) > 0)
    )
    if run_id is not None:
        query = query.where(RolloutRow.run_id == run_id)
    rates = [(ItemRate(*row[:8]), row[8]) for row in s.execute(query)]
    rates.sort(key=lambda pair: (pair[0].pass_rate, pair[1]))
    return [rate for rate, _ in rates]


def runs_of_task(s: Session, task: str) -> list[tuple[str, str]]:
    """(run id, policy) of the runs that hold the task, newest first, for the run filter."""
    rows = s.execute(
        select(RunRow.id, RunRow.policy)
        .join(RolloutRow)
        .where(RolloutRow.task == task)
        .group_by(RunRow.id, RunRow.policy, RunRow.created_at)
        .order_by(RunRow.created_at.desc())
    )
    return [(r[0], r[1]) for r in rows]


@dataclass(frozen=True)
class PassCounts:
    """One policy's rollouts of a task (or of a family level's instances, added up): its pass rate's evidence."""

    rollouts: int = 0
    complete: int = 0
    passed: int = 0

    def __add__(self, other: PassCounts) -> PassCounts:
        return PassCounts(
            self.rollouts + other.rollouts, self.complete + other.complete, self.passed + other.passed
        )

    @property
    def calibration(self) -> Calibration:
        return calibrate_counts(self.passed, self.complete)


def policy_label(policy: str, model: str | None) -> str:
    """How the pages name who made a run's rollouts: the policy, and its model when the run records one."""
    return f"{policy} {model}" if model else policy


def pass_counts(s: Session, family: str | None = None) -> list[tuple[str, str, PassCounts]]:
    """(task key, policy label, counts) per task key and policy with its model, never pooled across them.

    `family` (`world/name`) keeps that family's instances (`world/name-l<level>-s<seed>`).
    """
    query = (
        select(
            RolloutRow.task,
            RunRow.policy,
            RunRow.model,
            func.count(),
            _flag(_COMPLETE),
            func.sum(case((_COMPLETE, cast(RolloutRow.passed, Integer)), else_=0)),
        )
        .join(RunRow, RunRow.id == RolloutRow.run_id)
        .group_by(RolloutRow.task, RunRow.policy, RunRow.model)
        .order_by(RolloutRow.task)
    )
    if family is not None:
        # A key range rather than LIKE, so SQLite uses the task index; it also holds the instances of
        # a family whose name extends this one's (`x`'s range holds `x-long-l0-s1`), left out below.
        query = query.where(RolloutRow.task >= f"{family}-l", RolloutRow.task < f"{family}-m")
    return [
        (task, policy_label(policy, model), PassCounts(n, complete or 0, passed or 0))
        for task, policy, model, n, complete, passed in s.execute(query)
        if family is None or ((parsed := family_level(task)) is not None and parsed[0] == family)
    ]


def task_exists(s: Session, task: str) -> bool:
    return s.scalar(select(RolloutRow.id).where(RolloutRow.task == task).limit(1)) is not None
