"""The run store: runs, rollouts (with trajectory and grade) and per-item results.

SQLite under `.egym/runs.db` by default (WAL, zero setup); any SQLAlchemy URL
for teams (`postgresql://user@host/db` is driven by psycopg 3). Select it with
`--store URL` or the `EGYM_STORE` environment variable.

Guarantees the batch runner relies on:
- every write is one transaction, so a crash mid-write leaves the previous state;
- a rollout is keyed by (run, task, sample): inserting the plan twice, or
  recording a result twice, never makes a second row;
- `claim` is a compare-and-set, so a finished rollout is never run again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Integer, cast, create_engine, event, func, inspect, select, text, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from core.errors import StoreError
from core.owner import owner_alive
from core.trajectory import Trajectory
from grader.grade import Grade
from gym.store.models import Base, ItemResultRow, RolloutRow, RunRow, _now, new_id

__all__ = [
    "Base",
    "ItemResultRow",
    "RolloutRow",
    "RunRow",
    "Store",
    "add_missing_columns",
    "new_id",
    "resolve_url",
]
RolloutStatus = Literal["pending", "running", "done", "failed"]
RunStatus = Literal["running", "done", "failed", "interrupted"]
DEFAULT_PATH = Path(".egym") / "runs.db"


def resolve_url(url: str | None = None) -> str:
    """`--store` value, else $EGYM_STORE, else `.egym/runs.db`; plain paths mean SQLite files."""
    url = url or os.environ.get("EGYM_STORE") or str(DEFAULT_PATH)
    if "://" not in url:
        path = Path(url).expanduser().absolute()
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{path}"
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")  # readers (dashboard) never block the writer
    cur.execute("PRAGMA synchronous=FULL")  # a committed rollout survives power loss too
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


class Store:
    """The run store API. Methods return detached rows (safe to read after the call)."""

    def __init__(self, url: str | None = None, *, create: bool = True):
        self.url = resolve_url(url)
        try:
            self.engine: Engine = create_engine(self.url, **_engine_args(self.url))
            if self.engine.dialect.name == "sqlite":
                event.listen(self.engine, "connect", _sqlite_pragmas)
            if create:
                Base.metadata.create_all(self.engine)
                add_missing_columns(self.engine)
        except (SQLAlchemyError, ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot open run store {_redact(self.url)}: {_one_line(exc)}") from None
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A read/write transaction: committed on exit, rolled back on any exception."""
        try:
            with self._sessions.begin() as session:
                yield session
        except SQLAlchemyError as exc:
            raise StoreError(f"run store {_redact(self.url)}: {_one_line(exc)}") from None

    # -- runs ------------------------------------------------------------------

    def create_run(
        self,
        run_id: str | None = None,
        *,
        policy: str,
        model: str | None = None,
        tasks: Iterable[str] = (),
        samples: int = 1,
        config: dict[str, Any] | None = None,
        kind: str = "batch",
    ) -> RunRow:
        """Create the run, or return it when it exists with the same policy and model (a resume)."""
        run_id = run_id or f"{kind}-{_now():%Y%m%d-%H%M%S}-{new_id()[:4]}"
        with self.session() as s:
            run = s.get(RunRow, run_id)
            if run is None:
                run = RunRow(
                    id=run_id,
                    kind=kind,
                    policy=policy,
                    model=model,
                    tasks=list(tasks),
                    samples=samples,
                    config=config or {},
                    status="running",
                )
                s.add(run)
            elif (run.policy, run.model) != (policy, model):
                raise StoreError(
                    f"run '{run_id}' already exists with policy {run.policy} model {run.model}: "
                    "choose another --run name"
                )
            else:
                run.tasks = sorted(set(run.tasks) | set(tasks))
                run.samples = max(run.samples, samples)
        return run

    def acquire_run(self, run_id: str, owner: str) -> None:
        """Mark `owner` as the process running `run_id`; refuse when another live process holds it."""
        with self.session() as s:
            run = self._run(s, run_id)
            if run.owner and run.owner != owner and owner_alive(run.owner):
                raise StoreError(f"run '{run_id}' is being run by {run.owner}: wait for it, or stop it first")
            run.owner, run.status = owner, "running"

    def finish_run(self, run_id: str, status: RunStatus) -> None:
        with self.session() as s:
            run = self._run(s, run_id)
            run.status, run.owner = status, None

    def get_run(self, run_id: str) -> RunRow:
        with self.session() as s:
            return self._run(s, run_id)

    def list_runs(self, *, limit: int = 50, offset: int = 0, kind: str | None = None) -> list[RunRow]:
        query = select(RunRow).order_by(RunRow.created_at.desc()).limit(limit).offset(offset)
        if kind:
            query = query.where(RunRow.kind == kind)
        with self.session() as s:
            return list(s.scalars(query))

    def run_stats(self, run_id: str) -> dict[str, Any]:
        """Counts per status, mean reward and pass rate over done, complete rollouts."""
        with self.session() as s:
            counts = dict(
                s.execute(
                    select(RolloutRow.status, func.count())
                    .where(RolloutRow.run_id == run_id)
                    .group_by(RolloutRow.status)
                ).all()
            )
            mean, passed, scored, incomplete = s.execute(
                select(
                    func.avg(RolloutRow.reward),
                    func.sum(cast(RolloutRow.passed, Integer)),
                    func.count(RolloutRow.reward),
                    func.sum(cast(RolloutRow.incomplete, Integer)),
                ).where(RolloutRow.run_id == run_id, RolloutRow.status == "done")
            ).one()
        total = sum(counts.values())
        return {
            "total": total,
            **{k: counts.get(k, 0) for k in ("pending", "running", "done", "failed")},
            "mean_reward": mean,
            "pass_rate": (passed or 0) / scored if scored else None,
            "incomplete": incomplete or 0,
        }

    # -- rollouts -------------------------------------------------------------

    def add_rollouts(
        self, run_id: str, keys: Iterable[tuple[str, int]], *, step: int | None = None
    ) -> list[RolloutRow]:
        """Insert the planned (task, sample) rollouts that are not there yet; return all of them in order.

        `step`: the training step that samples them (a training run's rollouts).
        """
        keys = list(keys)
        with self.session() as s:
            self._run(s, run_id)
            existing = {
                (r.task, r.sample): r
                for r in s.scalars(select(RolloutRow).where(RolloutRow.run_id == run_id))
            }
            for task, sample in keys:
                if (task, sample) not in existing:
                    row = RolloutRow(
                        id=new_id(), run_id=run_id, task=task, sample=sample, step=step, status="pending"
                    )
                    s.add(row)
                    existing[(task, sample)] = row
        return [existing[k] for k in keys]

    def requeue_stale(self, run_id: str) -> int:
        """`running` rollouts whose owner process is gone (a killed runner) go back to `pending`."""
        with self.session() as s:
            stale = [
                r
                for r in s.scalars(
                    select(RolloutRow).where(RolloutRow.run_id == run_id, RolloutRow.status == "running")
                )
                if not (r.owner and owner_alive(r.owner))
            ]
            for row in stale:
                row.status, row.owner = "pending", None
        return len(stale)

    def release(self, run_id: str, owner: str) -> int:
        """After an interruption: `owner`'s unfinished rollouts go back to `pending`."""
        with self.session() as s:
            result = s.execute(
                update(RolloutRow)
                .where(RolloutRow.run_id == run_id, RolloutRow.status == "running", RolloutRow.owner == owner)
                .values(status="pending", owner=None)
            )
            return result.rowcount

    def claim(self, rollout_id: str, owner: str) -> bool:
        """Compare-and-set pending/failed -> running. False when done or held by another live process."""
        with self.session() as s:
            row = s.get(RolloutRow, rollout_id)
            if row is None or row.status == "done":
                return False
            if row.status == "running" and row.owner not in (None, owner) and owner_alive(row.owner):
                return False
            result = s.execute(
                update(RolloutRow)
                .where(RolloutRow.id == rollout_id, RolloutRow.status == row.status)
                .values(
                    status="running",
                    owner=owner,
                    attempts=RolloutRow.attempts + 1,
                    started_at=_now(),
                    error=None,
                    finished_at=None,
                )
            )
            return result.rowcount == 1

    def record(
        self,
        rollout_id: str,
        *,
        trajectory: Trajectory | None,
        grade: Grade | None,
        passed: bool | None = None,
        seconds: float | None = None,
        error: str | None = None,
    ) -> None:
        """Store a finished episode and its grade in one transaction (replacing any earlier items).

        With a grade the rollout is `done` (an `error` stop reason is kept, the grade may be
        incomplete); without one it is `failed` and `error` says why.
        """
        with self.session() as s:
            row = s.get(RolloutRow, rollout_id, options=[selectinload(RolloutRow.items)])
            if row is None:
                raise StoreError(f"no rollout '{rollout_id}' in {_redact(self.url)}")
            row.status = "done" if grade is not None else "failed"
            row.finished_at, row.seconds, row.error, row.owner = _now(), seconds, error, None
            if trajectory is not None:
                row.trajectory = trajectory.model_dump(mode="json")
                row.stop_reason, row.turns = trajectory.stop_reason, len(trajectory.steps)
                row.policy_seconds = sum(step.policy_seconds for step in trajectory.steps)
                row.error = error or trajectory.error
            row.items.clear()
            s.flush()  # delete old items before inserting ones with the same ids
            if grade is None:
                row.reward = row.earned = row.possible = row.incomplete = row.gated = row.passed = None
                return
            row.reward, row.earned, row.possible = grade.normalized, grade.earned, grade.possible
            row.incomplete, row.gated, row.passed = grade.incomplete, grade.gated, passed
            row.grade_meta = {
                "rubric_hash": grade.rubric_hash,
                "seconds": grade.seconds,
                "raw_earned": grade.raw_earned,
                "meta": grade.meta,
            }
            row.items.extend(ItemResultRow.from_model(i, item) for i, item in enumerate(grade.items))

    def regrade(self, rollout_id: str, grade: Grade, *, passed: bool | None = None) -> None:
        """Replace a done rollout's grade, keeping its trajectory (`egym grade ROLLOUT`)."""
        row = self.get_rollout(rollout_id)
        self.record(
            row.id, trajectory=row.trajectory_model(), grade=grade, passed=passed, seconds=row.seconds
        )

    def get_rollout(self, rollout_id: str) -> RolloutRow:
        """A rollout by id (or unique id prefix), with its items loaded."""
        with self.session() as s:
            rows = list(
                s.scalars(
                    select(RolloutRow)
                    .options(selectinload(RolloutRow.items))
                    .where(RolloutRow.id.startswith(rollout_id, autoescape=True))
                    .limit(2)
                )
            )
        if len(rows) != 1:
            what = "no rollout" if not rows else "more than one rollout"
            raise StoreError(f"{what} matches '{rollout_id}' in {_redact(self.url)}: see `egym runs`")
        return rows[0]

    def list_rollouts(
        self,
        run_id: str | None = None,
        *,
        task: str | None = None,
        status: RolloutStatus | None = None,
        step: int | None = None,
        with_items: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[RolloutRow]:
        """Rollouts ordered by (task, sample); trajectories are loaded, items only when asked."""
        query = (
            select(RolloutRow).order_by(RolloutRow.run_id, RolloutRow.task, RolloutRow.sample).offset(offset)
        )
        for column, value in (
            (RolloutRow.run_id, run_id),
            (RolloutRow.task, task),
            (RolloutRow.status, status),
            (RolloutRow.step, step),
        ):
            if value is not None:
                query = query.where(column == value)
        if with_items:
            query = query.options(selectinload(RolloutRow.items))
        if limit is not None:
            query = query.limit(limit)
        with self.session() as s:
            return list(s.scalars(query))

    @staticmethod
    def _run(s: Session, run_id: str) -> RunRow:
        run = s.get(RunRow, run_id)
        if run is None:
            raise StoreError(f"no run '{run_id}' in the run store: see `egym runs`")
        return run


def add_missing_columns(engine: Engine) -> None:
    """Columns added to the models since a store was made: added to its tables (all are nullable).

    create_all makes missing tables only; a store from before a new column would fail every
    query. Additive, nullable columns are the only schema change the store makes, so this
    is its whole migration story.
    """
    inspector = inspect(engine)
    for table in Base.metadata.sorted_tables:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present and column.nullable:
                kind = column.type.compile(dialect=engine.dialect)
                with engine.begin() as conn:
                    conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}"))


def _engine_args(url: str) -> dict[str, Any]:
    if make_url(url).get_backend_name() == "sqlite":
        return {"connect_args": {"check_same_thread": False, "timeout": 30}}
    return {"pool_pre_ping": True}


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def _one_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
