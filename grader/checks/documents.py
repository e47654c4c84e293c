"""Spreadsheet and text-document checks over documents read by LibreOffice (xlsx, ods, docx, odt...).

A spreadsheet reads as `{"kind": "spreadsheet", "sheets": [{"name", "cells": {"A1": {"value", "formula",
"text"}}}]}`; a text document as `{"kind": "text", "paragraphs": [{"style", "level", "text"}], "tables":
[[[cell, ...], ...]]}`. Cells are addressed `B7`, with `sheet` naming the sheet (default: the first),
or `Sheet1.B7` / `Sheet1!B7`.
"""

from __future__ import annotations

import re
from typing import Any

from grader import patterns
from grader.checks.base import (
    CheckContext,
    CheckResult,
    StateError,
    brief,
    matches_agent_text,
    reads_documents,
    same,
    text_matches,
)

__all__ = [
    "cell_value",
    "cell_formula",
    "range_equals",
    "sheet_exists",
    "document_contains",
    "heading_exists",
    "table_exists",
]
_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)$")


def _document(ctx: CheckContext, path: str, kind: str) -> dict[str, Any]:
    doc = ctx.probe.document(path)
    if "error" in doc:
        raise StateError(f"{path}: cannot read: {doc['error']}")
    if doc.get("kind") != kind:
        raise StateError(f"{path}: is a {doc.get('kind', 'unknown')} document, not a {kind}")
    return doc


def _sheet(doc: dict[str, Any], path: str, sheet: str | None) -> dict[str, Any]:
    sheets = doc.get("sheets") or []
    if not sheets:
        raise StateError(f"{path}: has no sheets")
    if sheet is None:
        return sheets[0]
    for found in sheets:
        if found.get("name") == sheet:
            return found
    raise StateError(f"{path}: no sheet {sheet!r} (sheets: {', '.join(s.get('name', '?') for s in sheets)})")


def _split_ref(ref: str, sheet: str | None) -> tuple[str | None, str]:
    """'Sheet1.B7' / 'Sheet1!B7' / 'B7' -> (sheet, 'B7')."""
    for sep in ("!", "."):
        if sep in ref:
            name, _, cell = ref.rpartition(sep)
            return name.strip("'$"), cell
    return sheet, ref


def _address(cell: str) -> tuple[int, int]:
    match = _CELL.match(cell.strip())
    if not match:
        raise ValueError(f"{cell!r} is not a cell address like B7")
    col = 0
    for ch in match.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return col, int(match.group(2))


def _name(col: int, row: int) -> str:
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"


def _cell(sheet: dict[str, Any], cell: str) -> dict[str, Any]:
    return (sheet.get("cells") or {}).get(_name(*_address(cell)), {})


@reads_documents("path")
def cell_value(
    ctx: CheckContext,
    *,
    path: str,
    cell: str,
    expected: Any,
    sheet: str | None = None,
    tolerance: float = 0.0,
    case_sensitive: bool = True,
) -> CheckResult:
    """Pass when the cell's computed value equals `expected` (numbers within `tolerance`)."""
    sheet_name, ref = _split_ref(cell, sheet)
    found = _cell(_sheet(_document(ctx, path, "spreadsheet"), path, sheet_name), ref)
    value = found.get("value")
    ok = same(value, expected, tolerance=tolerance, case_sensitive=case_sensitive)
    return CheckResult(ok, f"{cell} = {brief(value)}; expected {brief(expected)}")


def _normalize_formula(formula: str) -> str:
    text = formula.strip().removeprefix("of:").lstrip("=")
    return re.sub(r"\s+", "", text).upper().replace(";", ",").replace("$", "")


@reads_documents("path")
def cell_formula(
    ctx: CheckContext,
    *,
    path: str,
    cell: str,
    formula: str | None = None,
    regex: str | None = None,
    sheet: str | None = None,
) -> CheckResult:
    """Pass when the cell holds a formula (equal to `formula` ignoring case, spaces and `$`; or matching `regex`)."""
    sheet_name, ref = _split_ref(cell, sheet)
    found = _cell(_sheet(_document(ctx, path, "spreadsheet"), path, sheet_name), ref)
    actual = found.get("formula") or ""
    if not actual:
        return CheckResult(False, f"{cell} holds no formula (value {brief(found.get('value'))})")
    ok = True
    if formula is not None:
        ok = _normalize_formula(actual) == _normalize_formula(formula)
    if ok and regex is not None:
        ok = patterns.search(regex, actual, ignore_case=True) is not None
    return CheckResult(ok, f"{cell} = {actual}")


@reads_documents("path")
def range_equals(
    ctx: CheckContext,
    *,
    path: str,
    range: str,
    expected: list[list[Any]],
    sheet: str | None = None,
    tolerance: float = 0.0,
    case_sensitive: bool = True,
) -> CheckResult:
    """Pass when the cells in `range` (like `A1:C4`) hold `expected`, row by row (empty cells are null)."""
    sheet_name, ref = _split_ref(range, sheet)
    first, _, last = ref.partition(":")
    (c1, r1), (c2, r2) = _address(first), _address(last or first)
    data = _sheet(_document(ctx, path, "spreadsheet"), path, sheet_name)
    got = [[_cell(data, _name(c, r)).get("value") for c in _span(c1, c2)] for r in _span(r1, r2)]
    got = [[None if v == "" else v for v in row] for row in got]
    if same(got, expected, tolerance=tolerance, case_sensitive=case_sensitive):
        return CheckResult(True, f"{range}: {len(got)} row(s) as expected")
    bad = next(
        (
            f"{_name(c1 + j, r1 + i)} = {brief(v, 40)}, expected {brief(e, 40)}"
            for i, (row, want) in enumerate(zip(got, expected, strict=False))
            for j, (v, e) in enumerate(zip(row, want, strict=False))
            if not same(v, e, tolerance=tolerance, case_sensitive=case_sensitive)
        ),
        f"shape {len(got)}x{len(got[0]) if got else 0} vs {len(expected)}x{len(expected[0]) if expected else 0}",
    )
    return CheckResult(False, f"{range}: {bad}")


def _span(a: int, b: int) -> list[int]:
    return list(range(min(a, b), max(a, b) + 1))


@reads_documents("path")
def sheet_exists(ctx: CheckContext, *, path: str, name: str) -> CheckResult:
    """Pass when the spreadsheet has a sheet called `name`."""
    names = [s.get("name") for s in _document(ctx, path, "spreadsheet").get("sheets") or []]
    return CheckResult(name in names, f"sheets: {', '.join(map(str, names))}")


def _all_text(doc: dict[str, Any]) -> str:
    if doc.get("kind") == "spreadsheet":
        return "\n".join(
            str(c.get("text") if c.get("text") is not None else c.get("value", ""))
            for s in doc.get("sheets") or []
            for c in (s.get("cells") or {}).values()
        )
    lines = [p.get("text", "") for p in doc.get("paragraphs") or []]
    lines += [" | ".join(map(str, row)) for table in doc.get("tables") or [] for row in table]
    return "\n".join(lines)


@reads_documents("path")
@matches_agent_text
def document_contains(
    ctx: CheckContext,
    *,
    path: str,
    text: str | None = None,
    regex: str | None = None,
    case_sensitive: bool = False,
) -> CheckResult:
    """Pass when the document's text (paragraphs and tables; or every cell of a spreadsheet) contains it."""
    doc = ctx.probe.document(path)
    if "error" in doc:
        raise StateError(f"{path}: cannot read: {doc['error']}")
    content = _all_text(doc)
    ok = text_matches(content, text=text, regex=regex, case_sensitive=case_sensitive)
    return CheckResult(ok, f"{path}: {brief(content, 120)}")


@reads_documents("path")
@matches_agent_text
def heading_exists(ctx: CheckContext, *, path: str, text: str, level: int | None = None) -> CheckResult:
    """Pass when a heading (of `level`, if given) contains `text`."""
    paragraphs = _document(ctx, path, "text").get("paragraphs") or []
    headings = [
        p
        for p in paragraphs
        if (p.get("level") or 0) > 0 or str(p.get("style", "")).lower().startswith(("heading", "title"))
    ]
    for p in headings:
        if text_matches(p.get("text", ""), text=text) and (level is None or p.get("level") == level):
            return CheckResult(True, f"heading (level {p.get('level')}): {brief(p.get('text'))}")
    return CheckResult(False, f"headings: {brief([p.get('text') for p in headings], 200)}")


def _cells_equal(row: list[Any], want: list[Any]) -> bool:
    return len(row) >= len(want) and all(
        same(a, b, case_sensitive=False) for a, b in zip(row, want, strict=False)
    )


@reads_documents("path")
def table_exists(
    ctx: CheckContext,
    *,
    path: str,
    header: list[Any] | None = None,
    row: list[Any] | None = None,
    min_rows: int = 1,
) -> CheckResult:
    """Pass when a table has `header` as its first row, a row starting with `row`, and `min_rows` data rows."""
    tables = _document(ctx, path, "text").get("tables") or []
    for table in tables:
        if header is not None and not (table and _cells_equal(table[0], header)):
            continue
        body = table[1:] if header is not None else table
        if row is not None and not any(_cells_equal(r, row) for r in body):
            continue
        if len(body) >= min_rows:
            return CheckResult(True, f"table with {len(body)} row(s): {brief(table[:2], 120)}")
    return CheckResult(
        False, f"{len(tables)} table(s), none matching; first rows: {brief([t[:1] for t in tables], 160)}"
    )
