"""Helpers the HR & people families share: who is who, chat overlays, and rubric items over chat and tables."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from families._common import by_id, full_name, text_regex

TODAY = dt.date(2025, 4, 7)  # the world's date
AGENT = "jordan.lee"
ASKED_AT = "2025-04-07T08:40:00Z"  # an overlay post: after the seeded history, still part of it for `posted`
CHANNELS = {"FIN": "finance", "SAL": "sales", "SUP": "support"}  # team channels the agent belongs to


def people(world) -> dict[int, dict[str, Any]]:
    return by_id(world, "employees")


def active(world) -> list[dict[str, Any]]:
    return [p for p in world["employees"].dicts() if p["status"] == "active"]


def departments(world) -> dict[int, dict[str, Any]]:
    return by_id(world, "departments")


def head_of(world, code: str) -> dict[str, Any]:
    department = next(d for d in world["departments"].dicts() if d["code"] == code)
    return people(world)[department["head_id"]]


def me(world) -> dict[str, Any]:
    return next(p for p in world["employees"].dicts() if p["chat_username"] == AGENT)


def names(persons) -> list[str]:
    """Full names as whole-word patterns (for penalties over other people)."""
    return [text_regex(full_name(p)) for p in persons]


def loose(text: str) -> str:
    """A name as typed without accents or with them: 'García' also matches 'Garcia'."""
    plain = {"á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u", "ś": "s", "ç": "c", "ñ": "n"}
    out = ""
    for ch in text:
        out += f"[{ch}{plain[ch]}]" if ch in plain else re.escape(ch)
    return rf"(?<![\w.@-]){out}(?![\w@-])"


def item(
    item_id: str, description: str, ref: str, args: dict[str, Any], points: int, section: str, **extra
) -> dict[str, Any]:
    """A rubric item running `ref`: a built-in (`sql.value_equals`) or a name in rubrics.acme.checks.
    A penalty passes `reason=`: why it holds on the untouched state."""
    reason = extra.pop("reason", None)
    out = {"id": item_id, "description": description, "points": points, "kind": "python", "section": section}
    out |= {"check": ref if "." in ref else f"rubrics.acme.checks:{ref}", "args": args, **extra}
    return out | ({"baseline_ok": True, "baseline_reason": reason} if reason else {})


def post(channel: str, user: str, message: str, when: str = ASKED_AT) -> dict[str, Any]:
    """One post of an overlay chat file (a channel name, or dm:a,b)."""
    return {"channel": channel, "user": user, "create_at": when, "message": message}


def iso(day: dt.date) -> str:
    return day.isoformat()


def overlaps(a: tuple[dt.date, dt.date], b: tuple[dt.date, dt.date]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
