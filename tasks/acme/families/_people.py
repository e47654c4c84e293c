"""Helpers the HR & people families share: who is who, chat overlays, rubric items, and the kinds of
value (grader.claims) people answers assert beyond the world's: offices, chat usernames, colleagues
named the way coworkers name them."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from families._common import by_id, full_name
from grader.claims.extract import fold

TODAY = dt.date(2025, 4, 7)  # the world's date
AGENT = "jordan.lee"
ASKED_AT = "2025-04-07T08:40:00Z"  # an overlay post: after the seeded history, still part of it for `posted`
CHANNELS = {"FIN": "finance", "SAL": "sales", "SUP": "support"}  # team channels the agent belongs to
# The offices, as an answer names them ("works remotely" is Remote).
OFFICE = {"values": ["Berlin", "London", {"value": "Remote", "regex": r"\bremote(ly)?\b|\bfrom home\b"}]}
TIME_OFF_STATUS = {"values": ["requested", "approved", "declined"]}


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


def _word(text: str) -> str:
    """`text` as a whole word (lexicon patterns run on text with accents stripped)."""
    return rf"(?<![\w.@-]){re.escape(fold(text))}(?![\w@-])"


def usernames(world, *, mention: bool = False) -> dict[str, Any]:
    """A kind: chat usernames, with or without their @ (only with it when `mention`); an e-mail's
    local part is not one."""
    at = "@" if mention else "@?"
    return {
        "values": [
            {
                "value": p["chat_username"],
                "regex": rf"(?<![\w.@-]){at}{re.escape(p['chat_username'])}(?![\w@-])",
            }
            for p in world["employees"].dicts()
        ]
    }


def colleagues(world, *, skip_first: tuple[str, ...] = (), **extra) -> dict[str, Any]:
    """A kind: employees by full name, by @username, or by first name alone (unique in the company)
    the way coworkers write to each other; `skip_first`: first names that stand for someone else here;
    `extra`: more of the kind's fields (`allow`, `cap`)."""
    staff = world["employees"].dicts()
    taken = [p["first_name"] for p in staff]
    entries = []
    for p in staff:
        spellings = [_word(full_name(p)), rf"(?<![\w.@-])@{re.escape(p['chat_username'])}(?![\w@-])"]
        if taken.count(p["first_name"]) == 1 and p["first_name"] not in skip_first:
            spellings.append(_word(p["first_name"]))
        entries.append({"value": full_name(p), "regex": "|".join(spellings)})
    return {"values": entries, **extra}


def department_names(world) -> dict[str, Any]:
    """A kind: the departments by name, not inside a job title ("Account Executive" names no Executive
    department, "VP Sales" no Sales one): the world's lexicon reads those, and a post giving someone's
    title would state a wrong department."""
    titles = sorted({p["title"] for p in world["employees"].dicts()})
    entries = []
    for name in sorted(d["name"] for d in world["departments"].dicts()):
        word = re.escape(fold(name))
        # One alternative per title holding the name: the name not preceded by the title's start, or not
        # followed by its end (a match inside the title is both).
        guards = [
            (re.escape(fold(t[: t.index(name)])), re.escape(fold(t[t.index(name) + len(name) :])))
            for t in titles
            if re.search(rf"\b{re.escape(name)}\b", t)
        ]
        pattern = rf"(?<![\w.@-]){word}(?![\w@-])"
        for before, after in guards:
            if before and after:
                pattern = rf"(?:(?<!{before}){pattern}|{pattern}(?!{after}))"
            elif before:
                pattern = rf"(?<!{before}){pattern}"
            elif after:
                pattern = rf"{pattern}(?!{after})"
        entries.append({"value": name, "regex": pattern})
    return {"values": entries}


def post(channel: str, user: str, message: str, when: str = ASKED_AT) -> dict[str, Any]:
    """One post of an overlay chat file (a channel name, or dm:a,b)."""
    return {"channel": channel, "user": user, "create_at": when, "message": message}


def iso(day: dt.date) -> str:
    return day.isoformat()


def overlaps(a: tuple[dt.date, dt.date], b: tuple[dt.date, dt.date]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
