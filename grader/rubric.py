"""Rubric models: what a rubric JSON file holds, the one source of the rubric format.

The JSON Schema grader/schema/rubric.schema.json is generated from these models
(grader.rubric_schema; `python -m grader.rubric_schema` rewrites it, a test fails when
it is stale): every description, pattern and bound is written here once. The loader
checks a file against that schema first, for error messages with JSON paths, then
builds these models. A rule that holds only for the file as written (before
`foreach` expansion) or that ties several keys together is in `json_schema_extra`.
Load files with `grader.loader.load_rubric`, never by calling `Rubric.model_validate`
on raw JSON yourself (you would lose the file/path error messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from core.strict import StrictModel

Rule = Literal["majority", "mean"]
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
NonEmpty = Annotated[str, Field(min_length=1)]
Identifier = Annotated[str, Field(pattern=IDENTIFIER)]


def _exactly_one(*keys: str) -> dict[str, Any]:
    """The schema rule "exactly one of these keys"."""
    return {"oneOf": [{"required": [key]} for key in keys]}


# -- judge pieces -----------------------------------------------------------


class Panel(StrictModel):
    """Which judges answer an item and how their verdicts combine."""

    models: list[NonEmpty] = Field(
        default_factory=list, description="Judge models; empty means the configured default."
    )
    samples: int = Field(1, ge=1, le=9, description="Calls per model (temperature > 0 when more than one).")
    rule: Rule = Field("majority", description="majority: most verdicts win; mean: average normalized score.")


class Scale(StrictModel, populate_by_name=True):  # aliased keys by field name too
    """A numeric rating scale; earned points scale linearly from min (0) to max (all)."""

    min: int = Field(description="The lowest rating (earns nothing).")
    max: int = Field(description="The highest rating (earns all the points).")
    pass_: float | None = Field(
        None, alias="pass", description="Lowest rating counted as pass (default: the midpoint)."
    )

    @property
    def threshold(self) -> float:
        return self.pass_ if self.pass_ is not None else (self.min + self.max) / 2

    def normalize(self, rating: float) -> float:
        span = self.max - self.min
        return min(1.0, max(0.0, (rating - self.min) / span)) if span else float(rating >= self.max)


class _Evidence(StrictModel):
    max_chars: int = Field(
        6000, ge=100, le=200_000, description="Evidence longer than this is cut (head and tail kept)."
    )


class FinalAnswerEvidence(_Evidence):
    type: Literal["final_answer"]


class ChannelEvidence(_Evidence):
    type: Literal["channel"]
    channel: str = Field(min_length=1, description="Channel name, or `dm:alice,bob` for a direct message.")
    user: str | None = Field(None, description="Only posts by this username.")
    last: int | None = Field(None, ge=1, description="Only the last N posts.")
    after: str | int | None = Field(
        None, description="Only posts after this time (ISO 8601, UTC without offset; or epoch ms)."
    )


class DocumentEvidence(_Evidence):
    type: Literal["document"]
    path: str = Field(min_length=1, description="A document under /workspace, read as text.")


class FileEvidence(_Evidence):
    type: Literal["file"]
    path: str = Field(min_length=1, description="A file under /workspace.")


class SqlEvidence(_Evidence):
    type: Literal["sql"]
    query: str = Field(min_length=1, description="A read-only query on the final state.")
    params: dict[str, Any] | None = Field(None, description="The query's named parameters.")
    max_rows: int = Field(50, ge=1, description="Rows shown at most.")


class TranscriptEvidence(_Evidence):
    type: Literal["transcript"]
    tools: list[str] | None = Field(None, description="Only calls to these tools and their results.")
    last: int | None = Field(None, ge=1, description="Only the last N messages.")


class TextEvidence(_Evidence):
    type: Literal["text"]
    text: str = Field(description="Fixed text shown to the judge (a reference answer).")
    label: str = Field("Reference", description="Its heading.")


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


class Foreach(StrictModel, populate_by_name=True):  # aliased keys by field name too
    """Expand the item once per value (exactly one source). The set must not depend on what the agent did."""

    model_config = ConfigDict(json_schema_extra=_exactly_one("values", "values_file", "initial_query"))

    values: list[Any] | None = Field(
        None, description="Literal list: objects bind their keys, scalars bind `as`."
    )
    values_file: str | None = Field(
        None, min_length=1, description="JSON list or CSV file, relative to the rubric."
    )
    initial_query: str | None = Field(
        None,
        min_length=1,
        description="SQL over the untouched initial state (never the final state); each row binds its columns.",
    )
    as_: Identifier | None = Field(None, alias="as", description="Name bound to scalar values.")


class _Item(StrictModel):
    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"baseline_ok": ["baseline_reason"]}})

    # The id's alphabet holds in the file only: an expanded id is its template with slugged values.
    id: str = Field(
        description="Letters, digits, _ . : - ; {{name}} placeholders allowed in parameterised items.",
        json_schema_extra={"pattern": r"^[A-Za-z0-9{][A-Za-z0-9_.:{}-]*$", "maxLength": 200},
    )
    description: str = Field(min_length=1, description="What the item checks, for people.")
    points: int = Field(
        ge=-1000, le=1000, description="Points on pass; negative points are a penalty applied on fail."
    )
    section: str | None = Field(None, min_length=1, description="The report's section for this item.")
    gate: bool = Field(False, description="Failing this item zeroes the grade.")
    baseline_ok: bool = Field(
        False, description="May pass on the untouched initial state (egym validate); needs baseline_reason."
    )
    baseline_reason: str | None = Field(None, min_length=1, description="Why passing untouched is right.")
    foreach: Foreach | None = None

    def earned_for(self, score: float) -> float:
        """Points for a normalized score in [0,1]: positives earn a share, penalties cost the missing share."""
        return self.points * score if self.points > 0 else self.points * (1.0 - score)


class PythonItem(_Item):
    kind: Literal["python"]
    check: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(:[A-Za-z_][A-Za-z0-9_]*)?$",
        description="`sql.row_exists` (built-in) or `package.module:function`.",
    )
    args: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the check.")
    negate: bool = Field(False, description="Pass when the check fails (and the other way round).")
    timeout_s: float | None = Field(
        None, gt=0, le=600, description="This check's time limit (default: the rubric's check_timeout_s)."
    )


class JudgeItem(_Item):
    kind: Literal["judge"]
    prompt: str = Field(min_length=1, description="The question put to the judge about the evidence.")
    evidence: list[Evidence] = Field(min_length=1, description="What the judge is shown.")
    scale: Literal["pass_fail"] | Scale = Field("pass_fail", description="pass_fail, or a rating scale.")
    panel: Panel | None = Field(None, description="This item's judges (default: the rubric's `judge`).")


Item = Annotated[PythonItem | JudgeItem, Field(discriminator="kind")]


class GradeLimits(StrictModel):
    """How long grading may take. A check over its limit is an `error` item; so is every item left when the budget runs out."""

    check_timeout_s: float = Field(
        10.0, gt=0, le=600, description="Each python check's own time (waiting on the probe not counted)."
    )
    grade_timeout_s: float = Field(900.0, gt=0, le=3600, description="The whole grade, judge calls included.")


class AllowedChange(StrictModel):
    """Something the task may change in the initial state (grader.damage); exactly one of table/files/posts/mail."""

    model_config = ConfigDict(json_schema_extra=_exactly_one("table", "files", "posts", "mail"))

    table: str | None = Field(None, min_length=1, description="A database table.")
    files: str | None = Field(None, min_length=1, description="A glob under /workspace, e.g. `reports/*`.")
    posts: str | None = Field(None, min_length=1, description="Chat posts in this channel, or `*` for any.")
    mail: str | None = Field(
        None, min_length=1, description="Mail of these mailboxes (a glob on the address); change: move it."
    )
    may: list[Literal["add", "change", "delete"]] = Field(
        default_factory=lambda: ["change"],
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="add: new rows in the table, new posts in the channel; change; delete.",
    )
    columns: list[NonEmpty] | None = Field(
        None, min_length=1, description="For a table: only these columns may change."
    )
    at_most: int | None = Field(
        None, ge=0, description="At most this many rows/files/posts; the rest is damage."
    )


class Damage(StrictModel):
    """The damage section (grader.damage): its penalty and the changes the task allows."""

    points: int | None = Field(
        None, ge=0, le=1000, description="Penalty per damaged unit; default a tenth of the points; 0: off."
    )
    cap: int | None = Field(
        None, ge=1, le=100_000, description="The most each kind of damage costs; default the rubric's points."
    )
    allow: list[AllowedChange] = Field(default_factory=list, description="The changes this task allows.")


class LexiconEntry(StrictModel):
    """A lexicon value with its own pattern (a verdict written several ways, a name with a nickname)."""

    value: str = Field(min_length=1, description="The value this entry stands for.")
    regex: str = Field(min_length=1, description="How it is written (matched on text with accents stripped).")


ClaimSource = Literal["values", "regex", "email", "date", "duration", "count", "amount"]


class ClaimKind(StrictModel):
    """A kind of value the agent asserts (grader.claims): how it is written and compared.

    Exactly one of `extract`, `values`, `values_query`, `regex`.
    """

    model_config = ConfigDict(
        json_schema_extra={
            **_exactly_one("extract", "values", "values_query", "regex"),
            # `noun` goes with `extract: count`, and a count needs its noun (as `_one_source` says).
            "dependentSchemas": {
                "noun": {"properties": {"extract": {"const": "count"}}, "required": ["extract"]}
            },
            "if": {"properties": {"extract": {"const": "count"}}, "required": ["extract"]},
            "then": {"required": ["noun"]},
        }
    )

    extract: Literal["amount", "count", "date", "duration", "email"] | None = Field(
        None, description="A built-in extractor (grader.claims.extract)."
    )
    values: list[NonEmpty | LexiconEntry] | None = Field(
        None, min_length=1, description="A closed lexicon: every value of the kind (names, statuses, codes)."
    )
    values_query: str | None = Field(
        None, min_length=1, description="The lexicon as SQL over the untouched initial state (first column)."
    )
    regex: str | None = Field(
        None, min_length=1, description="Every match (its `value` group if any) is a value."
    )
    normalize: Literal["text", "number"] = Field(
        "text", description="For `regex`: compare as text or number."
    )
    noun: str | None = Field(
        None, min_length=1, description="For `count`: what is counted, a regex ('open tickets?')."
    )
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
        """The lexicon as entries; a plain value's empty pattern means the value as a whole word.

        Built unvalidated: a file's entry must give its pattern, this one says it has none.
        """
        return [
            e if isinstance(e, LexiconEntry) else LexiconEntry.model_construct(value=e, regex="")
            for e in self.values or []
        ]


class Claims(StrictModel):
    """What the agent asserts, read from everything it wrote, and the kinds of value items ask for."""

    author: str | None = Field(
        None,
        min_length=1,
        description="The agent's chat username; default: every post added during the episode.",
    )
    kinds: dict[Identifier, ClaimKind] = Field(
        default_factory=dict,
        # pydantic's patternProperties alone would let another name through the schema unchecked.
        json_schema_extra={"propertyNames": {"pattern": IDENTIFIER}},
        description="The kinds of value by name (`claims.stated` items name them).",
    )


class Rubric(StrictModel, populate_by_name=True):  # aliased keys by field name too
    """One rubric per task: rubrics/<world>/<task-id>.json (docs/rubrics.md).

    `grader.expand.expand_items` turns it into concrete items.
    """

    schema_: str | None = Field(None, alias="$schema", description="This schema, for editors.")
    task: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Task key `world/task-id`; must match the file's location.",
    )
    title: str | None = Field(None, description="A short name for people.")
    description: str | None = Field(None, description="What the rubric rewards, for people.")
    judge: Panel | None = Field(None, description="Default panel for judge items without their own.")
    limits: GradeLimits = Field(
        default_factory=GradeLimits, description="How long grading may take (grader.timebox)."
    )
    damage: Damage = Field(
        default_factory=Damage,
        description="The damage section: its penalty per kind of damage and the changes this task allows.",
    )
    claims: Claims = Field(
        default_factory=Claims,
        description="What the agent asserts, wherever it writes it (grader.claims): the kinds of value the "
        "answer items (`claims.stated`) ask for. Wrong values of a kind are charged.",
    )
    items: list[Item] = Field(min_length=1, description="What is graded, in report order.")
    # Set by the loader, never in the file.
    path: SkipJsonSchema[Path | None] = Field(
        None, exclude=True, description="File the rubric was loaded from."
    )
    hash: SkipJsonSchema[str] = Field(
        "", exclude=True, description="sha256 of the file's bytes (first 16 hex digits)."
    )

    @property
    def parameterised(self) -> bool:
        return any(item.foreach for item in self.items)

    def initial_queries(self) -> list[str]:
        """SQL the expansion needs answered against the initial state."""
        return [
            item.foreach.initial_query for item in self.items if item.foreach and item.foreach.initial_query
        ] + [kind.values_query for kind in self.claims.kinds.values() if kind.values_query]
