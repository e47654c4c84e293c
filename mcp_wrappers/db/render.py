"""Rows as JSON-safe values and as a compact, psql-like text table. No database access here."""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from decimal import Decimal
from typing import Any

MAX_CELL_CHARS = 80


def json_value(value: Any) -> Any:
    """A value PostgreSQL returned, as something JSON can carry without losing its meaning."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return (
            int(value)
            if value == value.to_integral_value() and abs(value) < 2**53
            else (float(value) if len(value.as_tuple().digits) <= 15 else str(value))
        )
    if isinstance(value, dt.date | dt.time):  # datetime is a date
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, uuid.UUID | dt.timedelta):
        return str(value)
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def text_table(columns: list[str], rows: list[list[Any]]) -> str:
    """Aligned columns separated by ' | ', a rule under the header; values already JSON-safe."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = [
        " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
        "-+-".join("-" * w for w in widths),
    ]
    lines += [" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def row_summary(shown: int, truncated: bool, limit: int) -> str:
    if truncated:
        return f"({shown} rows shown; more exist: the limit is {limit}, add WHERE/LIMIT or raise limit)"
    return f"({shown} row{'s' if shown != 1 else ''})"
