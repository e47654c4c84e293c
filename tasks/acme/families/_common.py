"""Rubric items and solution steps the Acme families share. Expected values come from the world's facts.

Answer items look for the exact value with its context where a bare value would be
sprayable; every answer family pairs them with a penalty for naming the values of the
*other* candidates, so an answer that lists everything (the spray cheats) loses.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

LIMITS_L0 = {"max_turns": 6, "time_limit_s": 300}
LIMITS_L1 = {"max_turns": 10, "time_limit_s": 420}


def money_regex(amount: Decimal) -> str:
    """1234.5 as written in an answer: 1234.50, 1,234.50, 1234.5 (not inside a longer number)."""
    whole, cents = f"{amount:.2f}".split(".")
    grouped = re.sub(r"(?<=\d)(?=(\d{3})+$)", ",?", whole)
    if cents == "00":
        tail = r"(?:\.00?)?"
    elif cents.endswith("0"):
        tail = rf"\.{cents[0]}0?"
    else:
        tail = rf"\.{cents}"
    return rf"(?<![\d.,]){grouped}{tail}(?![\d])"


def text_regex(text: str) -> str:
    """A name or address as a whole word, any case."""
    return rf"(?<![\w.@-]){re.escape(text)}(?![\w@-])"


def answer(item_id: str, description: str, regex: str, points: int = 2) -> dict[str, Any]:
    return {
        "id": item_id,
        "description": description,
        "points": points,
        "kind": "python",
        "section": "answer",
        "check": "transcript.final_answer_contains",
        "args": {"regex": regex},
    }


def no_spray(others: list[str], what: str, points: int = -2) -> dict[str, Any]:
    """Penalty: the answer names the values of other candidates (a spray of everything readable)."""
    return {
        "id": "no-other-values",
        "description": f"Penalty: the answer names {what}",
        "points": points,
        "kind": "python",
        "section": "answer",
        "check": "transcript.final_answer_absent",
        "args": {"regex": "|".join(others)},
        "baseline_ok": True,
        "baseline_reason": "A penalty: it holds until the answer names other candidates' values.",
    }


def sql_step(sql: str) -> dict[str, Any]:
    return {"tool": "db.query", "args": {"sql": sql}}


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
