"""Helpers the support & chat families share: tickets, SLAs, chat overlays, and the kinds of value
(grader.claims) support answers assert beyond the world's: ticket ids, subjects, SLA verdicts."""

from __future__ import annotations

import datetime as dt
from typing import Any

from families._common import by_id, quoted

AGENT = "jordan.lee"
ASKED_AT = "2025-04-07T08:45:00Z"  # an overlay post: after the seeded history's last post, before the episode
OPEN = ("new", "open", "pending")
PRIORITIES = ("urgent", "high", "normal", "low")
TEAM_CHANNELS = {"FIN": "finance", "SAL": "sales", "SUP": "support", "ENG": "engineering"}  # public ones
NOT_NEG = r"(?<!not )(?<!n't )(?<!never )(?<!no )"
# A ticket id as written ("ticket 42", "#42", "42:"): any number up to 4 digits that is no part of a
# date, a time, an amount or a word.
TICKET = {"regex": r"(?<![\w.,/:-])(?P<value>\d{1,4})(?![\w]|[.,:/-]?\d)"}
# Met or missed: in words a prompt does not use, so restating the question states neither.
VERDICT = {
    "values": [
        {
            "value": "met",
            "regex": rf"{NOT_NEG}\b(met|in time|on time|within (the|its) (sla|limit|target))\b",
        },
        {
            "value": "missed",
            "regex": rf"{NOT_NEG}\b(missed|breach(ed|es)?|late|exceeded|too slow)\b|\b(not met|not within|n't met)\b",
        },
    ]
}


def subjects(world) -> dict[str, Any]:
    """A kind: the subjects of the world's tickets."""
    return {"values": sorted({t["subject"] for t in world["support_tickets"].dicts()})}


def post(channel: str, user: str, message: str, when: str = ASKED_AT, **extra) -> dict[str, Any]:
    """One post of an overlay chat file (a channel name, or dm:a,b)."""
    return {"channel": channel, "user": user, "create_at": when, "message": message, **extra}


def sla(world) -> dict[str, dict[str, Any]]:
    return {p["priority"]: p for p in world["sla_policies"].dicts()}


def agents(world) -> list[dict[str, Any]]:
    """The support engineers: everyone tickets are assigned to."""
    people = by_id(world, "employees")
    return [people[i] for i in sorted({t["assignee_id"] for t in world["support_tickets"].dicts()} - {None})]


def minutes_to_first_response(ticket: dict[str, Any]) -> int:
    return int((ticket["first_response_at"] - ticket["created_at"]).total_seconds() // 60)


def breached(ticket: dict[str, Any], policies: dict[str, dict[str, Any]]) -> bool:
    return minutes_to_first_response(ticket) > 60 * policies[ticket["priority"]]["first_response_hours"]


def ticket_rows_sql(rows: list[dict[str, Any]]) -> str:
    """Overlay tickets with explicit ids, and the id sequence moved past them."""
    cols = ("id", "customer_id", "contact_id", "subject", "description", "priority", "status", "assignee_id")
    cols += ("source", "created_at", "first_response_at", "resolved_at")

    def lit(v: Any) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, int):
            return str(v)
        return quoted(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else str(v))

    values = ",\n".join("(" + ", ".join(lit(r.get(c)) for c in cols) + ")" for r in rows)
    return (
        f"INSERT INTO support_tickets ({', '.join(cols)}) VALUES\n{values};\n"
        "SELECT setval(pg_get_serial_sequence('support_tickets', 'id'), (SELECT max(id) FROM support_tickets));\n"
    )
