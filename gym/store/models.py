"""Tables of the run store: runs, rollouts (trajectory and grade) and per-item results."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    inspect,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from core.errors import StoreError
from core.trajectory import Trajectory
from grader.grade import Grade, ItemResult


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def new_id() -> str:
    return uuid.uuid4().hex[:12]


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[str]: JSON, list[dict[str, Any]]: JSON}


class RunRow(Base):
    """One invocation of `egym batch`/`rollout`/`calibrate`/`validate`/`train`: a plan of rollouts."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32), default="batch")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=_now)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=_now, onupdate=_now)
    policy: Mapped[str] = mapped_column(String(128))
    model: Mapped[str | None] = mapped_column(String(256))
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tasks: Mapped[list[str]] = mapped_column(default=list)
    samples: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(16), default="running")
    owner: Mapped[str | None] = mapped_column(String(256), doc="host:pid:start of the process running it.")

    rollouts: Mapped[list[RolloutRow]] = relationship(back_populates="run", cascade="all, delete-orphan")


class RolloutRow(Base):
    """One episode: the task, its sample index, how it went, the trajectory and the grade."""

    __tablename__ = "rollouts"
    __table_args__ = (UniqueConstraint("run_id", "task", "sample", name="uq_rollout_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    task: Mapped[str] = mapped_column(String(256), index=True)
    sample: Mapped[int] = mapped_column(Integer)
    step: Mapped[int | None] = mapped_column(
        Integer, doc="The training step that sampled it (runs of kind train); NULL otherwise."
    )
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    owner: Mapped[str | None] = mapped_column(String(256))
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime)
    seconds: Mapped[float | None] = mapped_column(Float)
    policy_seconds: Mapped[float | None] = mapped_column(Float, doc="Time spent waiting for the policy.")
    stop_reason: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    turns: Mapped[int | None] = mapped_column(Integer)
    trajectory: Mapped[dict[str, Any] | None] = mapped_column(JSON, doc="Trajectory.model_dump(mode='json').")
    trajectory_path: Mapped[str | None] = mapped_column(
        String(1024), doc="Used instead when stored as a file."
    )
    reward: Mapped[float | None] = mapped_column(Float, doc="Normalized score in [0,1].")
    earned: Mapped[float | None] = mapped_column(Float)
    possible: Mapped[int | None] = mapped_column(Integer)
    incomplete: Mapped[bool | None] = mapped_column(Boolean)
    gated: Mapped[bool | None] = mapped_column(Boolean)
    passed: Mapped[bool | None] = mapped_column(
        Boolean, doc="reward >= the task's pass_threshold; NULL when unknown (incomplete grade)."
    )
    grade_meta: Mapped[dict[str, Any] | None] = mapped_column(
        JSON, doc="rubric_hash, grading seconds, raw_earned (points without the floor at 0), meta."
    )

    run: Mapped[RunRow] = relationship(back_populates="rollouts")
    items: Mapped[list[ItemResultRow]] = relationship(
        back_populates="rollout", cascade="all, delete-orphan", order_by="ItemResultRow.position"
    )

    def trajectory_model(self) -> Trajectory | None:
        if self.trajectory is not None:
            return Trajectory.model_validate(self.trajectory)
        if self.trajectory_path:
            return Trajectory.model_validate_json(Path(self.trajectory_path).read_text())
        return None

    def grade_model(self) -> Grade | None:
        """The Grade rebuilt from the row and its items (items must be loaded: see Store.get_rollout)."""
        if self.earned is None or self.possible is None:
            return None
        if "items" in inspect(self).unloaded:
            raise StoreError(
                f"rollout {self.id}: items not loaded; use Store.get_rollout or list_rollouts(with_items=True)"
            )
        meta = dict(self.grade_meta or {})
        return Grade(
            task=self.task,
            rubric_hash=meta.pop("rubric_hash", None),
            earned=self.earned,
            raw_earned=meta.pop("raw_earned", None),
            possible=self.possible,
            normalized=self.reward or 0.0,
            incomplete=bool(self.incomplete),
            gated=bool(self.gated),
            seconds=meta.pop("seconds", 0.0),
            meta=meta.pop("meta", {}),
            items=[item.to_model() for item in self.items],
        )


class ItemResultRow(Base):
    """One rubric item's result within one rollout."""

    __tablename__ = "item_results"
    __table_args__ = (UniqueConstraint("rollout_id", "item_id", name="uq_item_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    rollout_id: Mapped[str] = mapped_column(ForeignKey("rollouts.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer, doc="Order within the rubric.")
    item_id: Mapped[str] = mapped_column(String(256), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    section: Mapped[str | None] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(16))
    points: Mapped[int] = mapped_column(Integer)
    gate: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(8))
    earned: Mapped[float] = mapped_column(Float, default=0.0)
    evidence: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    verdicts: Mapped[list[dict[str, Any]]] = mapped_column(default=list)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)

    rollout: Mapped[RolloutRow] = relationship(back_populates="items")

    @classmethod
    def from_model(cls, position: int, item: ItemResult) -> ItemResultRow:
        data = item.model_dump(mode="json")
        return cls(position=position, item_id=data.pop("id"), **data)

    def to_model(self) -> ItemResult:
        return ItemResult(
            id=self.item_id,
            description=self.description,
            section=self.section,
            kind=self.kind,
            points=self.points,
            gate=self.gate,
            status=self.status,
            earned=self.earned,
            evidence=self.evidence,
            error=self.error,
            verdicts=self.verdicts,
            seconds=self.seconds,
        )
