"""The office server's UNO-free helpers: A1 addresses, workspace confinement, text rendering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_wrappers.office import cells, files, render
from mcp_wrappers.office.files import OfficeError


@given(st.integers(0, cells.MAX_COLUMNS - 1), st.integers(0, cells.MAX_ROWS - 1))
def test_cell_names_round_trip(col, row):
    assert cells.parse_cell(cells.cell_name(col, row)) == (col, row)


def test_addresses_and_ranges():
    assert cells.column_name(0) == "A" and cells.column_name(25) == "Z" and cells.column_name(26) == "AA"
    assert cells.parse_cell("$b$12") == (1, 11)
    assert cells.parse_range("C10:A1") == (0, 0, 2, 9)
    assert cells.range_name(0, 0, 0, 0) == "A1" and cells.range_name(0, 0, 2, 9) == "A1:C10"
    for bad in ("1A", "A0", "B", "A1:B2:C3", "XFE1"):
        with pytest.raises(OfficeError):
            cells.parse_range(bad)


def test_paths_are_confined_to_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("EGYM_WORKSPACE", str(tmp_path))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.xlsx").write_bytes(b"x")
    (tmp_path / ".hidden.csv").write_text("x")
    (tmp_path / "out").symlink_to("/etc")
    assert files.resolve("sub/a.xlsx") == tmp_path / "sub" / "a.xlsx"
    assert files.resolve(str(tmp_path / "b.docx")) == tmp_path / "b.docx"
    for bad in ("../a.xlsx", "/etc/passwd", "out/hosts", "sub/../../x.csv"):
        with pytest.raises(OfficeError, match="outside"):
            files.resolve(bad)
    with pytest.raises(OfficeError, match="no such file: sub/b.xlsx"):
        files.existing("sub/b.xlsx")
    assert [r["path"] for r in files.list_files()] == ["sub/a.xlsx"]
    with pytest.raises(OfficeError, match="unsupported file type '.txt'"):
        files.format_of(tmp_path / "notes.txt")
    assert files.format_of(tmp_path / "R.DOCX").kind == "text"


def test_sheet_grid_shows_formulas_with_their_values():
    grid = render.sheet_grid(
        "S",
        {
            "A1": {"value": "Item", "formula": None, "text": "Item"},
            "B3": {"value": 7, "formula": "=SUM(B1:B2)", "text": "7"},
            "C3": {"value": "a|b", "formula": None, "text": "a|b"},
        },
        "A1:C3",
        "A1:C3",
    )
    assert grid.splitlines()[1:] == [
        "| row | A | B | C |",
        "|---|---|---|---|",
        "| 1 | Item |  |  |",
        "| 3 |  | =SUM(B1:B2) → 7 | a\\|b |",
    ]
    assert render.sheet_grid("S", {}, None, None) == "Sheet 'S' is empty."


def test_document_text_marks_headings_styles_and_tables():
    content = {
        "paragraphs": [
            {"style": "Heading 2", "level": 2, "text": "Risks"},
            {"style": "Text body", "level": None, "text": "None."},
            {"style": "Quote", "level": None, "text": "Hm."},
            {"style": "Standard", "level": None, "text": ""},
        ],
        "tables": [[["a", "b"]]],
        "order": [("p", 0), ("t", 0), ("p", 1), ("p", 2), ("p", 3)],
    }
    assert render.document_text("r.docx", content).splitlines()[2:] == [
        "## Risks",
        "[Table 1]",
        "| a | b |",
        "None.",
        "[Quote] Hm.",
    ]
