"""The rubric's regular expressions, run with a hard time limit.

Every pattern a rubric holds is matched against text the agent wrote. A pattern
that backtracks catastrophically on that text (`^(a|a)*$` on a long line) must
not hold the grade: Python's `re` cannot be interrupted while a match holds the
interpreter, so patterns run on the `regex` module, which checks its timeout
inside the matching loop. Its syntax is `re`'s (VERSION0).

A match that runs over its time is charged to the agent: PatternTimeout is a
StateError, so the item fails (a penalty fires) with the reason as evidence,
instead of the rollout's grade being dropped.
"""

from __future__ import annotations

import functools

import regex

from grader.errors import StateError

TIMEOUT_S = 1.0
error = regex.error  # what a pattern that does not compile raises

__all__ = ["PatternTimeout", "TIMEOUT_S", "compiled", "error", "finditer", "search"]


class PatternTimeout(StateError):
    """A pattern ran over its time on the agent's text."""


@functools.lru_cache(maxsize=8192)
def compiled(pattern: str, ignore_case: bool = False) -> regex.Pattern:
    """The compiled pattern (cached); `error` when it does not compile."""
    return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)


def _timed_out(pattern: str, text: str) -> PatternTimeout:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return PatternTimeout(
        f"the pattern {shown!r} ran over {TIMEOUT_S:g} s on {len(text):,} characters of the agent's text"
    )


def search(
    pattern: str, text: str, *, ignore_case: bool = False, timeout: float = TIMEOUT_S
) -> regex.Match | None:
    """The first match of `pattern` in `text`; PatternTimeout past `timeout` seconds."""
    try:
        return compiled(pattern, ignore_case).search(text, timeout=timeout)
    except TimeoutError:
        raise _timed_out(pattern, text) from None


def finditer(
    pattern: str,
    text: str,
    *,
    ignore_case: bool = False,
    overlapped: bool = False,
    timeout: float = TIMEOUT_S,
) -> list[regex.Match]:
    """Every match of `pattern` in `text`, all found within `timeout` seconds (PatternTimeout otherwise);
    `overlapped`: also those that start inside another match."""
    try:
        return list(compiled(pattern, ignore_case).finditer(text, overlapped=overlapped, timeout=timeout))
    except TimeoutError:
        raise _timed_out(pattern, text) from None
