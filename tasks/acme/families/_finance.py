"""Helpers the finance & sales families share: money owed, month labels, lines, generated spreadsheets and claim kinds."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections import defaultdict
from decimal import Decimal
from typing import Any

from families._common import MONTHS

TODAY = dt.date(2025, 4, 7)  # the world's "now" (acmegen roster.TODAY); no payment is later
OPEN = ("sent", "partially_paid")
BILLED = ("sent", "paid", "partially_paid")  # invoices that count as invoiced (not draft, not void)
LIMITS_L2 = {"max_turns": 20, "time_limit_s": 600}
# Whether an invoice is overdue, as people say it (a claim kind). The negation is the longer match, so
# "not overdue" is never also read as "overdue"; prompts ask "has it passed its due date", which is neither.
_PAST = r"(?:overdue|late|past (?:its |the )?due(?: date)?)"
_PASSED = r"passed (?:its |the )?due date"
OVERDUE = {
    "values": [
        {"value": "overdue", "regex": rf"\b{_PAST}\b|\b(?:has|it's|it has) {_PASSED}\b"},
        {
            "value": "not overdue",
            "regex": rf"\b(?:not|isn['’]t|is not|no longer|hasn['’]t|has not)\s+(?:yet\s+)?(?:{_PAST}|{_PASSED}|due)\b"
            r"|\bdue in \d+ days?\b|\b(?:has been|was|is) (?:fully |already )?paid\b",
        },
    ]
}


def paid_by_invoice(world) -> dict[int, Decimal]:
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for p in world["payments"].dicts():
        paid[p["invoice_id"]] += p["amount"]
    return paid


def month_label(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def month_after(year: int, month: int, n: int = 1) -> tuple[int, int]:
    index = year * 12 + month - 1 + n
    return index // 12, index % 12 + 1


def eur(amount: Decimal) -> str:
    return f"{amount:,.2f}"


def xlsx_bytes(sheets: dict[str, list[list[Any]]]) -> bytes:
    """A workbook whose bytes are the same on every run (first row bold, like acmegen's files)."""
    from acmegen.docfmt import normalize_zip
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    wb.properties.creator = "Acme Analytics"
    wb.properties.created = dt.datetime(2025, 1, 2, 9, 0, 0)
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(list(row))
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for column in "ABCDEFGH":
            ws.column_dimensions[column].width = 18
    buf = io.BytesIO()
    wb.save(buf)
    return normalize_zip(buf.getvalue())


def csv_bytes(rows: list[list[Any]]) -> bytes:
    return "".join(",".join(_csv_cell(v) for v in row) + "\n" for row in rows).encode()


def _csv_cell(value: Any) -> str:
    text = value.isoformat() if isinstance(value, dt.date) else str(value)
    return '"' + text.replace('"', '""') + '"' if "," in text or '"' in text else text


def slug(text: str) -> str:
    """A rubric item id part: 'Marlowe & Finch' -> 'marlowe-finch'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def expense_category_kind(world) -> dict[str, Any]:
    """The expense categories as a claim kind; 'other' only as a label gives it ("category: other"),
    bare it is any answer's word."""
    categories = sorted({c["category"] for c in world["expense_claims"].dicts()})
    labelled = r"\bcategor\w*\W{0,12}(?:is\W{0,3})?other\b|\bother\W{0,3}categor"
    return {"values": [{"value": c, "regex": labelled} if c == "other" else c for c in categories]}
