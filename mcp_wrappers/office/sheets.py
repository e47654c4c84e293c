"""Spreadsheet cells and sheets: read values with their formulas, write values or formulas.

A cell as read: {"value": number | string | null, "formula": "=..." | null, "text": shown text}.
`value` is the computed result for a formula; null when the cell shows an error
(then `text` holds it, e.g. "#DIV/0!").

Formulas are written and shown in Excel syntax (`=IF(A1>0,"yes","no")`,
`='Q 2'!B3`), which is what models and task authors know; LibreOffice's own
API syntax (`;` separators, `$'Q 2'.B3`) is accepted on write as a fallback.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from mcp_wrappers.office.cells import cell_name, parse_cell, parse_range, range_name
from mcp_wrappers.office.documents import Doc
from mcp_wrappers.office.files import OfficeError

Cell = dict[str, Any]
Scalar = str | int | float | bool | None
_NUMERAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BAD_SHEET_CHARS = set("[]*?:/\\")
_EPOCH = dt.date(1899, 12, 30)  # spreadsheet day 0


@dataclass
class Block:
    """Cells read from one sheet: what was asked, what exists, and whether rows were cut off."""

    sheet: str
    range: str | None  # None: the sheet is empty
    used_range: str | None
    cells: dict[str, Cell]
    truncated: bool = False


def sheet_names(doc: Doc) -> list[str]:
    return list(doc.component.Sheets.ElementNames)


def get_sheet(doc: Doc, name: str | None) -> Any:
    """A sheet by name (case-insensitive), or the first sheet when no name is given."""
    sheets = doc.component.Sheets
    if not name:
        return sheets.getByIndex(0)
    if sheets.hasByName(name):
        return sheets.getByName(name)
    names = sheet_names(doc)
    for existing in names:
        if existing.lower() == name.strip().lower():
            return sheets.getByName(existing)
    raise OfficeError(f"no sheet '{name}' in {doc.name}: its sheets are " + ", ".join(repr(n) for n in names))


def used_bounds(sheet: Any) -> tuple[int, int, int, int] | None:
    """A1 to the last row and column holding content, or None for an empty sheet.

    Content cells only: a formatted but empty column must not make the grader read a million rows.
    """
    from com.sun.star.sheet.CellFlags import DATETIME, FORMULA, STRING, VALUE

    ranges = sheet.queryContentCells(VALUE | DATETIME | STRING | FORMULA).RangeAddresses
    if not ranges:
        return None
    return 0, 0, max(r.EndColumn for r in ranges), max(r.EndRow for r in ranges)


def read_block(
    doc: Doc, sheet_name: str | None = None, cell_range: str | None = None, max_cells: int | None = None
) -> Block:
    """Non-empty cells of a range (default: the used area), at most `max_cells` area (whole rows)."""
    sheet = get_sheet(doc, sheet_name)
    used = used_bounds(sheet)
    bounds = parse_range(cell_range) if cell_range else used
    block = Block(sheet.Name, None, range_name(*used) if used else None, {})
    if bounds is None:
        return block
    c1, r1, c2, r2 = bounds
    if max_cells and (c2 - c1 + 1) * (r2 - r1 + 1) > max_cells:
        r2 = r1 + max(1, max_cells // (c2 - c1 + 1)) - 1
        block.truncated = True
    block.range = range_name(c1, r1, c2, r2)
    block.cells = _read_cells(doc, sheet.getCellRangeByPosition(c1, r1, c2, r2), c1, r1)
    return block


def _read_cells(doc: Doc, rng: Any, col0: int, row0: int) -> dict[str, Cell]:
    # Two bulk calls for values and formulas; shown text and Excel-syntax formulas need per-cell calls.
    values, formulas = rng.getDataArray(), rng.getFormulaArray()
    cells: dict[str, Cell] = {}
    for i, row in enumerate(formulas):
        for j, formula in enumerate(row):
            if formula == "":
                continue
            value = values[i][j]
            if isinstance(value, str) and not formula.startswith("="):
                cells[cell_name(col0 + j, row0 + i)] = {"value": value, "formula": None, "text": value}
                continue
            cell = rng.getCellByPosition(j, i)
            cells[cell_name(col0 + j, row0 + i)] = {
                "value": _number(value) if isinstance(value, float) else value,
                "formula": _excel_formula(doc, cell) if formula.startswith("=") else None,
                "text": cell.getString(),
            }
    return cells


def _parser(doc: Doc) -> Any:
    if doc.parser is None:
        from com.sun.star.sheet.AddressConvention import XL_A1

        doc.parser = doc.component.createInstance("com.sun.star.sheet.FormulaParser")
        doc.parser.FormulaConvention = XL_A1
    return doc.parser


def _excel_formula(doc: Doc, cell: Any) -> str:
    return "=" + _parser(doc).printFormula(cell.getTokens(), cell.CellAddress)


def _set_formula(doc: Doc, cell: Any, formula: str) -> None:
    """Excel syntax first; if that yields an error, try LibreOffice's syntax and keep whichever works."""
    tokens = _parser(doc).parseFormula(formula, cell.CellAddress)
    cell.setTokens(tokens)
    if cell.getError() == 0:
        return
    cell.setFormula(formula)
    if cell.getError() != 0:
        cell.setTokens(tokens)


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def read_all(doc: Doc, max_cells: int | None = None) -> list[dict[str, Any]]:
    """Every sheet with its non-empty cells (the grader's view); OfficeError past `max_cells` in all.

    The used area is read in one block when it is small; a sparse sheet (A1 and XFD1048576) is
    read range by range of its content, so what is read is what the sheet holds, never its area.
    """
    out, left = [], max_cells
    for name in sheet_names(doc):
        sheet = get_sheet(doc, name)
        used = used_bounds(sheet)
        area = (used[2] + 1) * (used[3] + 1) if used else 0
        if left is None or area <= left:
            cells = read_block(doc, name).cells
        else:
            cells = _read_content(doc, sheet, left)
        if left is not None:
            left -= len(cells)
        out.append({"name": name, "cells": cells})
    return out


def _read_content(doc: Doc, sheet: Any, max_cells: int) -> dict[str, Cell]:
    """The sheet's content cells, range by range, in row-major order; OfficeError past `max_cells`."""
    from com.sun.star.sheet.CellFlags import DATETIME, FORMULA, STRING, VALUE

    ranges = sheet.queryContentCells(VALUE | DATETIME | STRING | FORMULA).RangeAddresses
    count = sum((r.EndColumn - r.StartColumn + 1) * (r.EndRow - r.StartRow + 1) for r in ranges)
    if count > max_cells:
        raise OfficeError(f"too large: {doc.name} holds more than {max_cells:,} cells with content")
    cells: dict[str, Cell] = {}
    for r in ranges:
        rng = sheet.getCellRangeByPosition(r.StartColumn, r.StartRow, r.EndColumn, r.EndRow)
        cells.update(_read_cells(doc, rng, r.StartColumn, r.StartRow))
    return dict(sorted(cells.items(), key=lambda kv: parse_cell(kv[0])[::-1]))


def write_block(doc: Doc, sheet_name: str | None, start: str, rows: list[list[Scalar]]) -> tuple[str, str]:
    """Write a 2-D block from `start`; returns (sheet name, range written)."""
    if not rows or not any(rows):
        raise OfficeError(
            'nothing to write: rows must be a non-empty list of rows, e.g. [["Total", "=SUM(B2:B9)"]]'
        )
    sheet = get_sheet(doc, sheet_name)
    col0, row0 = parse_cell(start)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            _set(doc, sheet.getCellByPosition(col0 + j, row0 + i), value)
    width = max(len(r) for r in rows)
    return sheet.Name, range_name(col0, row0, col0 + max(width, 1) - 1, row0 + len(rows) - 1)


def _set(doc: Doc, cell: Any, value: Scalar) -> None:
    """Numbers are numbers; '=...' is a formula; plain numerals and ISO dates are parsed; other text is text."""
    from com.sun.star.sheet.CellFlags import DATETIME, FORMULA, STRING, VALUE

    if value is None or value == "":
        cell.clearContents(VALUE | DATETIME | STRING | FORMULA)
    elif isinstance(value, bool):
        cell.setValue(1 if value else 0)
    elif isinstance(value, int | float):
        cell.setValue(value)
    elif value.startswith("="):
        _set_formula(doc, cell, value)
    elif value.startswith("'"):
        cell.setString(value[1:])
    elif _NUMERAL.match(value.strip()):
        cell.setValue(float(value))
    elif _ISO_DATE.match(value.strip()):
        _set_date(doc, cell, value.strip())
    else:
        cell.setString(value)


def _set_date(doc: Doc, cell: Any, iso: str) -> None:
    from com.sun.star.lang import Locale

    try:
        day = dt.date.fromisoformat(iso)
    except ValueError:
        cell.setString(iso)
        return
    formats, locale = doc.component.NumberFormats, Locale("en", "US", "")
    key = formats.queryKey("YYYY-MM-DD", locale, False)
    if key == -1:
        key = formats.addNew("YYYY-MM-DD", locale)
    cell.setValue((day - _EPOCH).days)
    cell.NumberFormat = key


def formula_results(doc: Doc, sheet_name: str, cell_range: str) -> dict[str, Cell]:
    """The formulas in a range with their computed values (to confirm what a write produced)."""
    block = read_block(doc, sheet_name, cell_range)
    return {addr: c for addr, c in block.cells.items() if c["formula"]}


def add_sheet(doc: Doc, name: str, position: int | None = None) -> list[str]:
    _check_sheet_name(doc, name)
    sheets = doc.component.Sheets
    count = sheets.getCount()
    index = count if position is None else max(0, min(position, count))
    sheets.insertNewByName(name, index)
    return sheet_names(doc)


def rename_sheet(doc: Doc, old: str, new: str) -> list[str]:
    sheet = get_sheet(doc, old)
    if sheet.Name != new:
        _check_sheet_name(doc, new, allow=sheet.Name)
        sheet.Name = new
    return sheet_names(doc)


def _check_sheet_name(doc: Doc, name: str, allow: str | None = None) -> None:
    if not name or not name.strip() or len(name) > 31:
        raise OfficeError("a sheet name needs 1 to 31 characters")
    bad = sorted(set(name) & _BAD_SHEET_CHARS)
    if bad or name.startswith("'"):
        raise OfficeError(f"sheet name '{name}' has characters sheets cannot use: {' '.join(bad) or chr(39)}")
    clash = [n for n in sheet_names(doc) if n.lower() == name.lower() and n != allow]
    if clash:
        raise OfficeError(f"{doc.name} already has a sheet named '{clash[0]}'")
