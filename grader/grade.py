"""The result of grading one rollout: `Grade` and its per-item `ItemResult`s.

These cross the run store, Ray workers, the trainer and the dashboard, so they
are strict pydantic models that round-trip through JSON unchanged.

Scoring rules (implemented in grader.score, summarised here for readers):
- `possible` is the sum of the positive points of all items: penalties can
  take points away but never raise the ceiling.
- `earned` is the sum of `earned` over items, floored at 0; a failed gate item
  zeroes it (`gated=True`).
- `raw_earned` is the same without the floor: the positive points (none when
  gated) plus every penalty, damage included. It goes below 0, so a policy that
  breaks things scores below one that does nothing even when both earn nothing.
- an item whose check could not run is `error`, never `fail`; any such item
  makes the grade `incomplete`, and consumers (training, calibration) leave
  incomplete grades out unless told otherwise.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from core.shown import json_safe
from core.strict import StrictModel

Status = Literal["pass", "fail", "error"]
Kind = Literal["python", "judge"]


def _json_safe(value: str | None) -> str | None:
    return json_safe(value) if isinstance(value, str) else value


def _json_safe_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {_json_safe_tree(k): _json_safe_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe_tree(v) for v in value]
    return _json_safe(value)


class Verdict(StrictModel):
    """One judge's answer for one item (a panel has several)."""

    model: str = Field(description="Judge model that gave this verdict.")
    sample: int = Field(0, description="Sample index when one model is asked several times.")
    score: float | None = Field(None, description="Normalized score in [0,1]; None when the call failed.")
    verdict: str | None = Field(None, description="The raw verdict on the item's scale (e.g. 'pass', '3').")
    reason: str = Field("", description="The judge's one-paragraph justification.")
    error: str | None = Field(None, description="Why this judge call failed, after retries.")
    cached: bool = Field(False, description="Served from the on-disk judge cache.")

    _safe = field_validator("verdict", "reason", "error")(lambda v: _json_safe(v))


class ItemResult(StrictModel):
    """How one rubric item (after expansion) fared."""

    id: str = Field(description="Item id, unique within the rubric after expansion.")
    description: str = ""
    section: str | None = None
    kind: Kind = "python"
    points: int = Field(description="Points the item is worth; negative for a penalty.")
    gate: bool = Field(False, description="Failing this item zeroes the whole grade.")
    status: Status
    earned: float = Field(0.0, description="Points earned: points (or a fraction for scaled judges) on pass.")
    evidence: str = Field("", description="Short text shown to humans: what the check saw.")
    error: str | None = Field(None, description="Why the check could not run (status == 'error').")
    verdicts: list[Verdict] = Field(default_factory=list, description="Judge panel verdicts, one per call.")
    seconds: float = Field(0.0, description="Time spent evaluating this item.")

    # Evidence quotes what the agent named (a file called b"\xff"): it must always dump as JSON.
    _safe = field_validator("id", "description", "evidence", "error")(lambda v: _json_safe(v))

    @property
    def penalty(self) -> bool:
        return self.points < 0


class Grade(StrictModel):
    """A rubric's verdict on one rollout's final state. `str(grade)` is like '120/183'."""

    task: str = Field(description="Task key, `world/task-id`.")
    rubric_hash: str | None = Field(None, description="Content hash of the rubric file used to grade.")
    earned: float = Field(description="Points earned after penalties and gates, never below 0.")
    raw_earned: float | None = Field(
        None, description="Points earned without the floor at 0 (None in grades stored before it existed)."
    )
    possible: int = Field(description="Sum of positive points.")
    normalized: float = Field(
        ge=0.0, le=1.0, description="earned / possible, in [0,1] (0 when possible is 0)."
    )
    incomplete: bool = Field(False, description="At least one item errored: do not trust this as a reward.")
    gated: bool = Field(False, description="A gate item failed, so the total was zeroed.")
    items: list[ItemResult] = Field(default_factory=list)
    seconds: float = Field(0.0, description="Wall time spent grading.")
    meta: dict[str, Any] = Field(
        default_factory=dict, description="Free-form facts (judge models, grader version)."
    )

    _safe_meta = field_validator("meta")(lambda v: _json_safe_tree(v))

    def __str__(self) -> str:
        return f"{_fmt(self.earned)}/{self.possible}"

    @property
    def reward(self) -> float:
        """The normalized score, the number trainers use by default."""
        return self.normalized

    @property
    def raw(self) -> float:
        """Points without the floor at 0 (can be negative)."""
        return self.earned if self.raw_earned is None else self.raw_earned

    @property
    def raw_normalized(self) -> float:
        """raw / possible: at most 1, below 0 when penalties outweigh the points earned."""
        return self.raw / self.possible if self.possible else min(0.0, self.raw)

    @property
    def damage(self) -> float:
        """Points lost in the damage section (0 or negative)."""
        return sum(item.earned for item in self.items if item.section == "damage")

    def by_status(self, status: Status) -> list[ItemResult]:
        return [item for item in self.items if item.status == status]

    def sections(self) -> dict[str, tuple[float, int]]:
        """Per-section (earned, possible), in first-seen order; items without a section go under ''."""
        out: dict[str, tuple[float, int]] = {}
        for item in self.items:
            earned, possible = out.get(item.section or "", (0.0, 0))
            out[item.section or ""] = (earned + item.earned, possible + max(item.points, 0))
        return out

    def incomplete_note(self) -> str:
        """'' for a complete grade, else e.g. 'incomplete (2 judge items not graded, 1 check could not run)'."""
        errors = self.by_status("error")
        if not errors:
            return ""
        judged = sum(item.kind == "judge" for item in errors)
        parts = [
            f"{n} {what}"
            for n, what in (
                (judged, "judge item not graded" if judged == 1 else "judge items not graded"),
                (
                    len(errors) - judged,
                    "check could not run" if len(errors) - judged == 1 else "checks could not run",
                ),
            )
            if n
        ]
        return f"incomplete ({', '.join(parts)})"

    def summary(self) -> str:
        """One line for logs and tables, e.g. '120/183 (65.6%) 40 pass, 3 fail, 1 error [incomplete (...)]'."""
        counts = ", ".join(f"{len(self.by_status(s))} {s}" for s in ("pass", "fail", "error"))
        flags = [flag for flag in ("gated" if self.gated else "", self.incomplete_note()) if flag]
        tail = f" [{', '.join(flags)}]" if flags else ""
        raw = f" raw {_fmt(self.raw)}" if self.raw != self.earned else ""
        return f"{self} ({self.normalized:.1%}){raw} {counts}{tail}"


def _fmt(value: float) -> str:
    """120.0 -> '120', 12.5 -> '12.5'."""
    return f"{value:g}" if value != int(value) else str(int(value))
