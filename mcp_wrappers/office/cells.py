"""A1-style cell addresses <-> zero-based (column, row). No UNO here."""

from __future__ import annotations

import re

from mcp_wrappers.office.files import OfficeError

_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})$")
MAX_COLUMNS = 16384  # XFD, the xlsx limit
MAX_ROWS = 1048576


def column_index(letters: str) -> int:
    index = 0
    for ch in letters.upper():
        index = index * 26 + (ord(ch) - 64)
    return index - 1


def column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def cell_name(col: int, row: int) -> str:
    return f"{column_name(col)}{row + 1}"


def parse_cell(text: str) -> tuple[int, int]:
    """'B12' -> (1, 11)."""
    match = _CELL.match(text.strip())
    if not match:
        raise OfficeError(f"bad cell address '{text}': use a column letter and a row number, e.g. 'B12'")
    col, row = column_index(match.group(1)), int(match.group(2)) - 1
    if col >= MAX_COLUMNS or row >= MAX_ROWS:
        raise OfficeError(f"cell '{text}' is beyond the sheet's last cell XFD{MAX_ROWS}")
    return col, row


def parse_range(text: str) -> tuple[int, int, int, int]:
    """'A1:C10' (or a single cell 'B2') -> (first_col, first_row, last_col, last_row)."""
    parts = text.split(":")
    if len(parts) > 2:
        raise OfficeError(f"bad range '{text}': use 'A1:C10' or a single cell like 'B2'")
    (c1, r1), (c2, r2) = parse_cell(parts[0]), parse_cell(parts[-1])
    return min(c1, c2), min(r1, r2), max(c1, c2), max(r1, r2)


def range_name(c1: int, r1: int, c2: int, r2: int) -> str:
    first, last = cell_name(c1, r1), cell_name(c2, r2)
    return first if first == last else f"{first}:{last}"
