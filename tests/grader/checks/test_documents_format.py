"""Document checks on the read_document format itself (what LibreOffice reports), without a sandbox.

The same checks run against real files opened by LibreOffice in test_documents.py.
"""

from __future__ import annotations

import pytest

from grader.checks import documents
from grader.checks.base import CheckContext
from grader.errors import StateError
from grader.probe import StaticProbe

SHEET = {
    "kind": "spreadsheet",
    "sheets": [
        {
            "name": "Summary",
            "cells": {
                "A1": {"value": "Rep", "formula": "", "text": "Rep"},
                "B1": {"value": "Amount", "formula": "", "text": "Amount"},
                "A2": {"value": "Ann", "formula": "", "text": "Ann"},
                "B2": {"value": 1200.5, "formula": "", "text": "1,200.50"},
                "A3": {"value": "Bob", "formula": "", "text": "Bob"},
                "B3": {"value": 300, "formula": "", "text": "300"},
                "A4": {"value": "Total", "formula": "", "text": "Total"},
                "B4": {"value": 1500.5, "formula": "=SUM(B2:B3)", "text": "1,500.50"},
            },
        },
        {"name": "Notes", "cells": {"AA10": {"value": "late", "formula": "", "text": "late"}}},
    ],
}
TEXT = {
    "kind": "text",
    "paragraphs": [
        {"style": "Title", "level": 0, "text": "Q1 report"},
        {"style": "Heading 1", "level": 1, "text": "Summary"},
        {"style": "Default", "level": 0, "text": "Revenue grew 12%."},
        {"style": "Heading 2", "level": 2, "text": "Risks"},
    ],
    "tables": [[["Region", "Revenue"], ["North", "1,200"], ["South", "800"]]],
}
CTX = CheckContext(
    StaticProbe(documents={"s.xlsx": SHEET, "r.docx": TEXT, "bad.docx": {"error": "not a document"}})
)


def test_cells_values_and_formulas():
    assert documents.cell_value(CTX, path="s.xlsx", cell="B2", expected=1200.5).passed
    assert documents.cell_value(CTX, path="s.xlsx", cell="Summary.B3", expected="300").passed
    assert documents.cell_value(CTX, path="s.xlsx", cell="Notes!AA10", expected="late").passed
    assert documents.cell_value(CTX, path="s.xlsx", cell="$B$4", expected=1500, tolerance=1).passed
    assert not documents.cell_value(CTX, path="s.xlsx", cell="B4", expected=1500).passed
    assert not documents.cell_value(CTX, path="s.xlsx", cell="C9", expected=1).passed
    assert documents.cell_formula(CTX, path="s.xlsx", cell="B4").passed
    assert documents.cell_formula(CTX, path="s.xlsx", cell="B4", formula="sum( b2:b3 )").passed
    assert documents.cell_formula(CTX, path="s.xlsx", cell="B4", regex=r"SUM\(B2:B\d\)").passed
    assert not documents.cell_formula(CTX, path="s.xlsx", cell="B4", formula="=SUM(B2:B4)").passed
    assert not documents.cell_formula(CTX, path="s.xlsx", cell="B2").passed  # a typed-in number


def test_ranges_and_sheets():
    expected = [["Ann", 1200.5], ["Bob", 300]]
    assert documents.range_equals(CTX, path="s.xlsx", range="A2:B3", expected=expected).passed
    wrong = documents.range_equals(
        CTX, path="s.xlsx", range="A2:B3", expected=[["Ann", 1200.5], ["Bob", 301]]
    )
    assert not wrong.passed and wrong.evidence == "A2:B3: B3 = 300, expected 301"
    assert documents.range_equals(CTX, path="s.xlsx", range="C1:C2", expected=[[None], [None]]).passed
    assert documents.sheet_exists(CTX, path="s.xlsx", name="Notes").passed
    assert not documents.sheet_exists(CTX, path="s.xlsx", name="Raw").passed
    with pytest.raises(StateError, match="no sheet 'Raw'"):
        documents.cell_value(CTX, path="s.xlsx", cell="A1", sheet="Raw", expected=1)


def test_text_headings_and_tables():
    assert documents.document_contains(CTX, path="r.docx", text="revenue grew 12%").passed
    assert documents.document_contains(CTX, path="r.docx", regex=r"South \| 800").passed  # table text counts
    assert documents.document_contains(CTX, path="s.xlsx", text="Total").passed  # every cell of a spreadsheet
    assert not documents.document_contains(CTX, path="r.docx", text="loss").passed
    assert documents.heading_exists(CTX, path="r.docx", text="risks").passed
    assert documents.heading_exists(CTX, path="r.docx", text="Summary", level=1).passed
    assert not documents.heading_exists(CTX, path="r.docx", text="Summary", level=2).passed
    assert not documents.heading_exists(CTX, path="r.docx", text="Revenue grew").passed  # body text
    assert documents.table_exists(CTX, path="r.docx", header=["region", "revenue"], row=["South", 800]).passed
    assert documents.table_exists(CTX, path="r.docx", header=["Region"], min_rows=2).passed
    assert not documents.table_exists(CTX, path="r.docx", header=["Region", "Cost"]).passed
    assert not documents.table_exists(CTX, path="r.docx", row=["East"]).passed


def test_unreadable_missing_or_wrong_kind_documents_fail_with_the_reason():
    with pytest.raises(StateError, match="bad.docx: cannot read: not a document"):
        documents.heading_exists(CTX, path="bad.docx", text="x")
    with pytest.raises(StateError, match="no such file"):
        documents.cell_value(CTX, path="missing.xlsx", cell="A1", expected=1)
    with pytest.raises(StateError, match="is a text document, not a spreadsheet"):
        documents.cell_value(CTX, path="r.docx", cell="A1", expected=1)
