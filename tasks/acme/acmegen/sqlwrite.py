"""Deterministic SQL text: literals, multi-row INSERTs, sequence resets."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal

Row = Sequence[object]


def literal(value: object) -> str:
    """One SQL literal; the type decides the spelling, never the locale or the clock."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return f"'{value:%Y-%m-%d %H:%M:%S}'"
    if isinstance(value, dt.date):
        return f"'{value:%Y-%m-%d}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no SQL literal for {type(value).__name__}: {value!r}")


def insert(table: str, columns: Sequence[str], rows: Iterable[Row], chunk: int = 200) -> str:
    """INSERT statements of at most `chunk` rows each (keeps statements readable in a diff)."""
    rows = list(rows)
    out: list[str] = []
    for start in range(0, len(rows), chunk):
        values = ",\n".join(
            "(" + ", ".join(literal(v) for v in row) + ")" for row in rows[start : start + chunk]
        )
        out.append(f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n{values};\n")
    return "".join(out)


def reset_sequence(table: str, column: str = "id") -> str:
    """After explicit ids, make the next serial value follow the largest one."""
    return f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), (SELECT max({column}) FROM {table}));\n"


def money(value: float | Decimal | int) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))
