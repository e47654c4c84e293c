"""Database checks. Queries run read-only as the superuser; with `params`, write `%(name)s` (and `%%` for %)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from grader.checks.base import CheckContext, CheckResult, brief, reads_sql, same

__all__ = ["row_exists", "row_absent", "value_equals", "count", "query_equals"]


@reads_sql()
def row_exists(ctx: CheckContext, *, query: str, params: dict[str, Any] | None = None) -> CheckResult:
    """Pass when the query returns at least one row."""
    rows = ctx.probe.sql(query, params)
    return CheckResult(bool(rows), f"{len(rows)} row(s)" + (f", first: {brief(rows[0])}" if rows else ""))


@reads_sql()
def row_absent(ctx: CheckContext, *, query: str, params: dict[str, Any] | None = None) -> CheckResult:
    """Pass when the query returns no row."""
    rows = ctx.probe.sql(query, params)
    return CheckResult(not rows, "no rows" if not rows else f"{len(rows)} row(s), first: {brief(rows[0])}")


@reads_sql()
def value_equals(
    ctx: CheckContext,
    *,
    query: str,
    expected: Any,
    params: dict[str, Any] | None = None,
    column: str | None = None,
    tolerance: float = 0.0,
    case_sensitive: bool = True,
) -> CheckResult:
    """Pass when the first row's value (its first column, or `column`) equals `expected`."""
    rows = ctx.probe.sql(query, params)
    if not rows:
        return CheckResult(False, f"no row; expected {brief(expected)}")
    row = rows[0]
    if column is not None and column not in row:
        return CheckResult(False, f"no column {column!r} in {brief(list(row))}")
    actual = row[column] if column is not None else next(iter(row.values()), None)
    ok = same(actual, expected, tolerance=tolerance, case_sensitive=case_sensitive)
    return CheckResult(ok, f"got {brief(actual)!s}; expected {brief(expected)}")


@reads_sql()
def count(
    ctx: CheckContext,
    *,
    query: str,
    params: dict[str, Any] | None = None,
    equals: int | None = None,
    min: int | None = None,
    max: int | None = None,
) -> CheckResult:
    """Pass when the number of rows returned is `equals` / within [`min`, `max`]."""
    if equals is None and min is None and max is None:
        raise ValueError("give equals, min or max")
    n = len(ctx.probe.sql(query, params))
    ok = (equals is None or n == equals) and (min is None or n >= min) and (max is None or n <= max)
    want = (
        f"= {equals}"
        if equals is not None
        else f"in [{min if min is not None else '-inf'}, {max if max is not None else 'inf'}]"
    )
    return CheckResult(ok, f"{n} row(s); expected {want}")


def _row_key(row: dict[str, Any] | list[Any], columns: list[str] | None, tolerance: float) -> tuple:
    values = (
        [row.get(c) for c in columns]
        if isinstance(row, dict) and columns
        else list(row.values() if isinstance(row, dict) else row)
    )
    return tuple(_canonical(v, tolerance) for v in values)


def _canonical(value: Any, tolerance: float) -> Any:
    """A hashable stand-in so `same`-equal values collide: numbers rounded to the tolerance, text trimmed."""
    if isinstance(value, bool) or value is None:
        return value
    try:
        number = (
            float(str(value).strip().replace(",", "")) if not isinstance(value, int | float) else float(value)
        )
    except ValueError:
        return str(value).strip()
    step = tolerance or 1e-9
    return round(number / step) * step


@reads_sql()
def query_equals(
    ctx: CheckContext,
    *,
    query: str,
    expected: list[dict[str, Any]] | list[list[Any]],
    params: dict[str, Any] | None = None,
    ordered: bool = False,
    tolerance: float = 0.0,
) -> CheckResult:
    """Pass when the result equals `expected` as a multiset of rows (a list when `ordered`).

    Rows given as objects compare those columns by name (other columns are ignored);
    rows given as lists compare positionally against every column.
    """
    rows = ctx.probe.sql(query, params)
    columns = list(expected[0]) if expected and isinstance(expected[0], dict) else None
    got = [_row_key(r, columns, tolerance) for r in rows]
    want = [_row_key(r, columns, tolerance) for r in expected]
    if ordered:
        ok = got == want
        return CheckResult(
            ok, f"{len(rows)} row(s) in order" if ok else f"got {brief(got)}; expected {brief(want)}"
        )
    missing, extra = Counter(want) - Counter(got), Counter(got) - Counter(want)
    if not missing and not extra:
        return CheckResult(True, f"all {len(want)} expected row(s), nothing else")
    parts = [
        f"missing {brief(list(missing.elements()), 120)}" if missing else "",
        f"unexpected {brief(list(extra.elements()), 120)}" if extra else "",
    ]
    return CheckResult(False, "; ".join(p for p in parts if p))
