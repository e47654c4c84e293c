"""Rubric models: what a rubric JSON file holds, after schema validation.

The JSON Schema (grader/schema/rubric.schema.json) is the authority on what a
file may contain and produces the error messages with JSON paths; these
pydantic models are the typed view the grader works with. Load files with
`grader.loader.load_rubric`, never by calling `Rubric.model_validate` on raw
JSON yourself (you would lose the file/path error messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Rule = Literal["majority", "mean"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# -- judge pieces -----------------------------------------------------------


class Panel(_Strict):
    """Which judges answer an item and how their verdicts combine."""

    models: list[str] = Field(
        default_factory=list, description="Judge models; empty means the configured default."
    )
    samples: int = Field(1, ge=1, le=9, description="Calls per model (temperature > 0 when more than one).")
    rule: Rule = Field("majority", description="majority: most verdicts win; mean: average normalized score.")


class Scale(_Strict):
    """A numeric rating scale; earned points scale linearly from min (0) to max (all)."""

    min: int = 1
    max: int = 5
    pass_: float | None = Field(
        None, alias="pass", description="Lowest rating counted as pass (default midpoint)."
    )

    @property
    def threshold(self) -> float:
        return self.pass_ if self.pass_ is not None else (self.min + self.max) / 2

    def normalize(self, rating: float) -> float:
        span = self.max - self.min
        return min(1.0, max(0.0, (rating - self.min) / span)) if span else float(rating >= self.max)


class _Evidence(_Strict):
    max_chars: int = Field(6000, description="Evidence longer than this is cut (head and tail kept).")


class FinalAnswerEvidence(_Evidence):
    type: Literal["final_answer"]


class ChannelEvidence(_Evidence):
    type: Literal["channel"]
    channel: str = Field(description="Channel name, or `dm:alice,bob` for a direct message.")
    user: str | None = Field(None, description="Only posts by this username.")
    last: int | None = Field(None, description="Only the last N posts.")
    after: str | int | None = Field(None, description="Only posts after this time (ISO 8601 or epoch ms).")


class DocumentEvidence(_Evidence):
    type: Literal["document"]
    path: str


class FileEvidence(_Evidence):
    type: Literal["file"]
    path: str


class SqlEvidence(_Evidence):
    type: Literal["sql"]
    query: str
    params: dict[str, Any] | None = None
    max_rows: int = 50


class TranscriptEvidence(_Evidence):
    type: Literal["transcript"]
    tools: list[str] | None = Field(None, description="Only calls to these tools and their results.")
    last: int | None = Field(None, description="Only the last N messages.")


class TextEvidence(_Evidence):
    type: Literal["text"]
    text: str
    label: str = "Reference"


Evidence = Annotated[
    FinalAnswerEvidence
    | ChannelEvidence
    | DocumentEvidence
    | FileEvidence
    | SqlEvidence
    | TranscriptEvidence
    | TextEvidence,
    Field(discriminator="type"),
]


# -- items ------------------------------------------------------------------


class Foreach(_Strict):
    """Where a parameterised item's values come from (exactly one source)."""

    values: list[Any] | None = Field(
        None, description="Literal list: objects bind their keys, scalars bind `as`."
    )
    values_file: str | None = Field(None, description="JSON list or CSV file, relative to the rubric.")
    initial_query: str | None = Field(
        None, description="SQL over the untouched initial state (never the final state)."
    )
    as_: str | None = Field(None, alias="as", description="Name bound to scalar values.")


class _Item(_Strict):
    id: str
    description: str
    points: int = Field(description="Points on pass; negative points are a penalty applied on fail.")
    section: str | None = None
    gate: bool = Field(False, description="Failing this item zeroes the grade.")
    baseline_ok: bool = Field(False, description="May pass on the untouched initial state (egym validate).")
    baseline_reason: str | None = None
    foreach: Foreach | None = None

    def earned_for(self, score: float) -> float:
        """Points for a normalized score in [0,1]: positives earn a share, penalties cost the missing share."""
        return self.points * score if self.points > 0 else self.points * (1.0 - score)


class PythonItem(_Item):
    kind: Literal["python"]
    check: str = Field(description="`sql.row_exists` (built-in) or `package.module:function`.")
    args: dict[str, Any] = Field(default_factory=dict)
    negate: bool = Field(False, description="Pass when the check fails.")
    timeout_s: float | None = Field(
        None, gt=0, le=600, description="This check's time limit (default: the rubric's check_timeout_s)."
    )


class JudgeItem(_Item):
    kind: Literal["judge"]
    prompt: str
    evidence: list[Evidence]
    scale: Literal["pass_fail"] | Scale = "pass_fail"
    panel: Panel | None = None


Item = Annotated[PythonItem | JudgeItem, Field(discriminator="kind")]


class GradeLimits(_Strict):
    """How long grading may take. A check over its limit is an `error` item; so is every item left when the budget runs out."""

    check_timeout_s: float = Field(
        10.0, gt=0, le=600, description="Each python check's own time (waiting on the probe not counted)."
    )
    grade_timeout_s: float = Field(900.0, gt=0, le=3600, description="The whole grade, judge calls included.")


class AllowedChange(_Strict):
    """Something the task may change in the initial state (grader.damage); exactly one of table/files/posts."""

    table: str | None = Field(None, description="A database table.")
    files: str | None = Field(None, description="A glob under /workspace, e.g. `reports/*`.")
    posts: str | None = Field(None, description="Chat posts in this channel, or `*` for any.")
    may: list[Literal["change", "delete"]] = Field(default_factory=lambda: ["change"])
    columns: list[str] | None = Field(None, description="For a table: only these columns may change.")
    at_most: int | None = Field(
        None, ge=0, description="At most this many rows/files/posts; the rest is damage."
    )


class Damage(_Strict):
    """The damage section (grader.damage): its penalty and the changes the task allows."""

    points: int | None = Field(
        None, ge=0, le=1000, description="Penalty per kind of damage; default a tenth of the points; 0: off."
    )
    allow: list[AllowedChange] = Field(default_factory=list)


class Rubric(_Strict):
    """A task's rubric as written; `grader.expand.expand_items` turns it into concrete items."""

    schema_: str | None = Field(None, alias="$schema")
    task: str = Field(description="Task key `world/task-id`.")
    title: str | None = None
    description: str | None = None
    judge: Panel | None = Field(None, description="Default panel for judge items without their own.")
    limits: GradeLimits = Field(default_factory=GradeLimits)
    damage: Damage = Field(default_factory=Damage)
    items: list[Item]
    path: Path | None = Field(None, exclude=True, description="File the rubric was loaded from.")
    hash: str = Field("", exclude=True, description="sha256 of the file's bytes (first 16 hex digits).")

    @property
    def parameterised(self) -> bool:
        return any(item.foreach for item in self.items)

    def initial_queries(self) -> list[str]:
        """SQL the expansion needs answered against the initial state."""
        return [
            item.foreach.initial_query for item in self.items if item.foreach and item.foreach.initial_query
        ]
