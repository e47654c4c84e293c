"""What every check gets and returns, and the comparisons the built-ins share.

A check is a plain function `fn(ctx, *, arg=..., ...) -> CheckResult | bool`:
keyword-only arguments (the rubric item's `args`), no registration step, no
base class. Raising marks the item `error`, except StateError (the state
cannot answer: the item fails with the message as evidence).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.trajectory import Trajectory
from grader import patterns
from grader.errors import StateError
from grader.probe import Probe

if TYPE_CHECKING:
    from grader.claims import Statements

__all__ = [
    "CheckContext",
    "CheckResult",
    "StateError",
    "matches_agent_text",
    "reads_documents",
    "reads_sql",
    "same",
    "text_matches",
    "brief",
]


@dataclass(frozen=True)
class CheckContext:
    """What a check may look at: the final state (probe), what the agent did (trajectory) and asserted (claims)."""

    probe: Probe
    trajectory: Trajectory | None = None
    item_id: str = ""
    claims: Statements | None = (
        None  # what the agent asserted everywhere (grader.claims), shared by the grade
    )

    @property
    def final_answer(self) -> str:
        return (self.trajectory.final_answer or "") if self.trajectory else ""


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    evidence: str = ""

    def __bool__(self) -> bool:
        return self.passed


def reads_documents(*arg_names: str) -> Callable[[Callable], Callable]:
    """Declare which arguments of a check name documents, so the grader can read them all in one go."""

    def mark(fn: Callable) -> Callable:
        fn.__egym_documents__ = arg_names  # type: ignore[attr-defined]
        return fn

    return mark


def reads_sql(query: str = "query", params: str = "params") -> Callable[[Callable], Callable]:
    """Declare which arguments hold a check's SQL and its params, so the grader can pipeline all queries."""

    def mark(fn: Callable) -> Callable:
        fn.__egym_sql__ = (query, params)  # type: ignore[attr-defined]
        return fn

    return mark


def matches_agent_text(fn: Callable | None = None, *, when: tuple[str, ...] = ()) -> Callable:
    """Mark a check that passes on text the agent wrote matching a pattern (an answer, a post).

    Such a check has no precision: an answer that lists every candidate passes it. `egym lint`
    warns when a rubric rewards one (points > 0) and asks for a `claims.stated` item instead.
    `when`: the arguments that carry the pattern, for a check that also matches other things; an
    item giving none of them matches no text (`mail.sent` to someone with a workspace file attached).
    """

    def mark(check: Callable) -> Callable:
        check.__egym_matches_text__ = when or True  # type: ignore[attr-defined]
        return check

    return mark(fn) if fn is not None else mark


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def same(actual: Any, expected: Any, *, tolerance: float = 0.0, case_sensitive: bool = True) -> bool:
    """Equal as the author means it: numbers within tolerance (numeric text counts), text trimmed."""
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(actual) == len(expected) and all(
            same(a, e, tolerance=tolerance, case_sensitive=case_sensitive)
            for a, e in zip(actual, expected, strict=True)
        )
    if actual is None or expected is None:
        return actual is None and expected is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return (
            str(actual).strip().lower() in ("true", "t", "1", "yes")
            if expected
            else str(actual).strip().lower() in ("false", "f", "0", "no")
        )
    a, e = _number(actual), _number(expected)
    if a is not None and e is not None:
        return math.isclose(a, e, abs_tol=tolerance, rel_tol=0.0) or a == e
    a_text, e_text = str(actual).strip(), str(expected).strip()
    return a_text == e_text if case_sensitive else a_text.casefold() == e_text.casefold()


def text_matches(
    haystack: str, *, text: str | None = None, regex: str | None = None, case_sensitive: bool = False
) -> bool:
    """`text` as a substring and/or `regex` searched; at least one must be given."""
    if text is None and regex is None:
        raise ValueError("give `text` or `regex`")
    ok = True
    if text is not None:
        ok = text in haystack if case_sensitive else text.casefold() in haystack.casefold()
    if ok and regex is not None:
        # The rubric's pattern on the agent's text: under a time limit (PatternTimeout, a StateError).
        ok = patterns.search(regex, haystack, ignore_case=not case_sensitive) is not None
    return ok


def brief(value: Any, limit: int = 160) -> str:
    """A short, one-line rendering for evidence."""
    text = " ".join(str(value)[: limit * 4].split())  # cut first: evidence of a 1 MB answer is 160 chars
    return text if len(text) <= limit else text[: limit - 1] + "…"
