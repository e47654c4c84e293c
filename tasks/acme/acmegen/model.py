"""The generated world as plain rows, shared by the SQL, chat and document writers."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from decimal import Decimal


@dataclass
class Table:
    name: str
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)

    def add(self, *values: object) -> tuple:
        if len(values) != len(self.columns):
            raise ValueError(f"{self.name}: {len(values)} values for {len(self.columns)} columns")
        self.rows.append(values)
        return values

    def dicts(self) -> list[dict]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def by_id(self) -> dict[object, dict]:
        return {row["id"]: row for row in self.dicts()}


@dataclass
class WorldData:
    """Every table of the company database, in load order."""

    seed: int
    rng: random.Random
    tables: dict[str, Table] = field(default_factory=dict)
    deal_lines: dict[int, list[tuple]] = field(default_factory=dict)  # deal id -> (product, qty, price)
    facts: dict[str, object] = field(default_factory=dict)  # planted facts the chat and documents refer to

    def table(self, name: str, *columns: str) -> Table:
        self.tables[name] = Table(name, columns)
        return self.tables[name]

    def __getitem__(self, name: str) -> Table:
        return self.tables[name]


def day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def between(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    """A uniformly drawn day in [start, end]."""
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def workday(date: dt.date) -> dt.date:
    """The same day, or the next Monday when it falls on a weekend."""
    while date.weekday() >= 5:
        date += dt.timedelta(days=1)
    return date


def cents(rng: random.Random, low: float, high: float) -> Decimal:
    return Decimal(rng.randint(int(low * 100), int(high * 100))) / 100
