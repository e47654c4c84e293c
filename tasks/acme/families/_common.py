"""Rubric items and solution steps the Acme families share. Expected values come from the world's facts.

An answer item is a claim (grader.claims): a value of a kind (an employee, an amount, a date,
a count of something), stated where the task asks for it. The grader reads everything the
agent wrote and charges every wrong value of the kind, wherever it was written, so an answer
that lists every candidate (the spray cheats) or dumps every row earns nothing. The kinds come
from families/world.py's `claims`; a family adds its own in `Instance.claims`.
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
    return rf"(?<![\d.,]){grouped}{tail}(?!\d|[.,]\d)"  # 149 is not inside 149.43


def stated(
    item_id: str,
    description: str,
    kind: str,
    value: Any,
    points: int = 2,
    *,
    where: str = "answer",
    about: str | None = None,
    section: str | None = None,
    tolerance: float | None = None,
) -> dict[str, Any]:
    """An answer item: `value` (of `kind`) stated in `where` ('answer', '#channel', dm(...), 'file:path'),
    about `about` when the answer lists several subjects."""
    args: dict[str, Any] = {
        "kind": kind,
        "value": value if isinstance(value, str | int | float) else str(value),
    }
    args |= {"where": where} if where != "answer" else {}
    args |= {"about": about} if about else {}
    args |= {"tolerance": tolerance} if tolerance is not None else {}
    return {
        "id": item_id,
        "description": description,
        "points": points,
        "kind": "python",
        "section": section or ("answer" if where == "answer" else "reply"),
        "check": "claims.stated",
        "args": args,
    }


def count_kind(noun: str) -> dict[str, Any]:
    """A kind for a count of something: a number next to `noun` (a regex: 'open (support )?tickets?')."""
    return {"extract": "count", "noun": noun}


def sql_step(sql: str) -> dict[str, Any]:
    return {"tool": "db.query", "args": {"sql": sql}}


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


LIMITS_L2 = {"max_turns": 16, "time_limit_s": 600}
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def full_name(person: dict[str, Any]) -> str:
    return f"{person['first_name']} {person['last_name']}"


def by_id(world, table: str) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in world[table].dicts()}


def item(
    item_id: str, description: str, ref: str, args: dict[str, Any], points: int, section: str, **extra
) -> dict[str, Any]:
    """A rubric item running `ref`: a built-in (`sql.value_equals`) or a name in rubrics.acme.checks.
    A penalty passes `reason=`: why it holds on the untouched state."""
    reason = extra.pop("reason", None)
    out = {"id": item_id, "description": description, "points": points, "kind": "python", "section": section}
    out |= {"check": ref if "." in ref else f"rubrics.acme.checks:{ref}", "args": args, **extra}
    return out | ({"baseline_ok": True, "baseline_reason": reason} if reason else {})


def state(item_id: str, description: str, query: str, expected: Any, points: int = 3) -> dict[str, Any]:
    """The database holds `expected` (the first column of the query's first row)."""
    return {
        "id": item_id,
        "description": description,
        "points": points,
        "kind": "python",
        "section": "database",
        "check": "sql.value_equals",
        "args": {"query": query, "expected": expected},
    }


def execute_step(sql: str) -> dict[str, Any]:
    return {"tool": "db.execute", "args": {"sql": sql}}


def post_step(channel: str, message: str) -> dict[str, Any]:
    return {"tool": "chat.post_message", "args": {"channel": channel, "message": message}}


def dm_step(username: str, message: str) -> dict[str, Any]:
    return {"tool": "chat.send_direct_message", "args": {"username": username, "message": message}}


def dm(username: str, agent: str = "jordan.lee") -> str:
    """The channel name checks use for the direct messages between the agent and `username`."""
    return "dm:" + ",".join(sorted((agent, username)))


def conversations(coworkers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Damage allowances for talking with the task's coworkers: the agent's messages and their replies."""
    return [{"posts": dm(c["username"]), "may": ["add"]} for c in coworkers]
