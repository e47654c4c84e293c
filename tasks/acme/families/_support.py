"""Helpers the support, chat & documents families share: tickets, SLAs, chat overlays, generated documents."""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from pathlib import Path
from typing import Any

from families._common import by_id, quoted

AGENT = "jordan.lee"
ASKED_AT = "2025-04-07T08:45:00Z"  # an overlay post: after the seeded history's last post, before the episode
OPEN = ("new", "open", "pending")
PRIORITIES = ("urgent", "high", "normal", "low")
TEAM_CHANNELS = {"FIN": "finance", "SAL": "sales", "SUP": "support", "ENG": "engineering"}  # public ones
NOT_NEG = r"(?<!not )(?<!n't )(?<!never )(?<!no )"
# A verdict in words a prompt does not use, so restating the prompt passes neither.
MET = rf"(?i:{NOT_NEG}\b(was met|were met|is met|been met|met (the|its)|within (the|its|\d)|in time|on time|fast enough)\b)"
MISSED = rf"(?i:{NOT_NEG}\b(missed|breach(ed|es)?|late|exceeded|too slow)\b|\b(not met|not within|n't met)\b)"


def item(
    item_id: str, description: str, ref: str, args: dict[str, Any], points: int, section: str, **extra
) -> dict[str, Any]:
    """A rubric item running `ref`: a built-in (`sql.value_equals`) or a name in rubrics.acme.checks.
    A penalty passes `reason=`: why it holds on the untouched state."""
    reason = extra.pop("reason", None)
    out = {"id": item_id, "description": description, "points": points, "kind": "python", "section": section}
    out |= {"check": ref if "." in ref else f"rubrics.acme.checks:{ref}", "args": args, **extra}
    return out | ({"baseline_ok": True, "baseline_reason": reason} if reason else {})


def post(channel: str, user: str, message: str, when: str = ASKED_AT, **extra) -> dict[str, Any]:
    """One post of an overlay chat file (a channel name, or dm:a,b)."""
    return {"channel": channel, "user": user, "create_at": when, "message": message, **extra}


def loose(text: str) -> str:
    """A name as a whole word, typed with or without its accents: 'García' also matches 'Garcia'."""
    plain = {"á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u", "ś": "s", "ç": "c", "ñ": "n"}
    out = "".join(f"[{ch}{plain[ch]}]" if ch in plain else re.escape(ch) for ch in text)
    return rf"(?<![\w.@-]){out}(?![\w@-])"


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


def number(n: int | str) -> str:
    return rf"(?<![\d.,]){n}(?![\d]|[.,]\d)"


def hours_regex(minutes: int) -> str:
    """A duration as people write it: 5.7 / 5.68 hours, 5 h 41 min, 341 minutes (whole hours need a unit)."""
    h, m = divmod(minutes, 60)
    alts = {rf"{number(f'{minutes / 60:.1f}')}", rf"{number(f'{minutes / 60:.2f}')}"}
    alts.add(rf"{number(h)}\s*(h|hrs?|hours?)\W{{0,3}}(and\s*)?{m}\s*(m|mins?|minutes?)\b")
    alts.add(rf"{number(minutes)}\s*(m|mins?|minutes?)\b")
    if m == 0:
        alts.add(rf"{number(h)}\s*(h|hrs?|hours?)\b")
    return "(?i:" + "|".join(sorted(alts)) + ")"


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


def document_bytes(suffix: str, title: str, blocks: list[tuple[str, object]]) -> bytes:
    """A .docx or .odt written by acmegen's writers (same bytes on every run)."""
    from acmegen.docfmt import write_docx, write_odt

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"doc.{suffix}"
        (write_docx if suffix == "docx" else write_odt)(path, title, blocks)
        return path.read_bytes()
