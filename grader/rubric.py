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

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    may: list[Literal["add", "change", "delete"]] = Field(
        default_factory=lambda: ["change"],
        description="add: new rows in the table, new posts in the channel; change; delete.",
    )
    columns: list[str] | None = Field(None, description="For a table: only these columns may change.")
    at_most: int | None = Field(
        None, ge=0, description="At most this many rows/files/posts; the rest is damage."
    )


class Damage(_Strict):
    """The damage section (grader.damage): its penalty and the changes the task allows."""

    points: int | None = Field(
        None, ge=0, le=1000, description="Penalty per damaged unit; default a tenth of the points; 0: off."
    )
    cap: int | None = Field(
        None, ge=1, le=100_000, description="The most each kind of damage costs; default the rubric's points."
    )
    allow: list[AllowedChange] = Field(default_factory=list)


class LexiconEntry(_Strict):
    """A lexicon value with its own pattern (a verdict written several ways, a name with a nickname)."""

    value: str = Field(description="The value this entry stands for.")
    regex: str = Field(description="How it is written (matched on text with accents stripped).")


ClaimSource = Literal["values", "regex", "email", "date", "duration", "count", "amount"]


class ClaimKind(_Strict):
    """A kind of value the agent asserts (grader.claims): how it is written and compared.

    Exactly one of `extract`, `values`, `values_query`, `regex`.
    """

    extract: Literal["amount", "count", "date", "duration", "email"] | None = Field(
        None, description="A built-in extractor (grader.claims.extract)."
    )
    values: list[str | LexiconEntry] | None = Field(
        None, description="A closed lexicon: every value of the kind (names, statuses, codes)."
    )
    values_query: str | None = Field(
        None, description="The lexicon as SQL over the untouched initial state (first column)."
    )
    regex: str | None = Field(None, description="Every match (its `value` group if any) is a value.")
    normalize: Literal["text", "number"] = Field(
        "text", description="For `regex`: compare as text or number."
    )
    noun: str | None = Field(None, description="For `count`: what is counted, a regex ('open tickets?').")
    case_sensitive: bool = Field(
        False, description="Codes that are also words (IT, DE) match in capitals only."
    )
    tolerance: float = Field(
        0.0, ge=0, description="Amounts and durations: how far a value may be from the expected one."
    )
    allow: list[str | int | float] = Field(
        default_factory=list, description="Values never charged (besides those the prompt holds)."
    )
    charge: float | None = Field(
        None, gt=0, description="Points per wrong value; default: the mean points of the kind's items."
    )
    cap: float | None = Field(
        None, gt=0, description="The most the kind's wrong values cost; default: the points of its items."
    )

    @model_validator(mode="after")
    def _one_source(self) -> ClaimKind:
        given = [n for n in ("extract", "values", "values_query", "regex") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of extract, values, values_query, regex (got {given or 'none'})"
            )
        if (self.extract == "count") != (self.noun is not None):
            raise ValueError("`noun` goes with `extract: count`, and a count needs its noun")
        return self

    @property
    def source(self) -> ClaimSource:
        if self.extract is not None:
            return self.extract
        return "regex" if self.regex is not None else "values"

    def entries(self) -> list[LexiconEntry]:
        """The lexicon as entries (a plain value's pattern is the value as a whole word)."""
        return [
            e if isinstance(e, LexiconEntry) else LexiconEntry(value=e, regex="") for e in self.values or []
        ]


class Claims(_Strict):
    """What the agent asserts, read from everything it wrote, and the kinds of value items ask for."""

    author: str | None = Field(
        None, description="The agent's chat username; default: every post added during the episode."
    )
    kinds: dict[str, ClaimKind] = Field(default_factory=dict)


class Rubric(_Strict):
    """A task's rubric as written; `grader.expand.expand_items` turns it into concrete items."""

    schema_: str | None = Field(None, alias="$schema")
    task: str = Field(description="Task key `world/task-id`.")
    title: str | None = None
    description: str | None = None
    judge: Panel | None = Field(None, description="Default panel for judge items without their own.")
    limits: GradeLimits = Field(default_factory=GradeLimits)
    damage: Damage = Field(default_factory=Damage)
    claims: Claims = Field(default_factory=Claims)
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
        ] + [kind.values_query for kind in self.claims.kinds.values() if kind.values_query]
