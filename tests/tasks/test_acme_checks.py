"""The Acme task-specific checks on purpose-built states (StaticProbe): each passes and fails when it should."""

from __future__ import annotations

import pytest

from grader.checks.base import CheckContext
from grader.probe import StaticProbe
from rubrics.acme import checks

OLD, NEW = checks.HISTORY_UNTIL_MS - 60_000, checks.HISTORY_UNTIL_MS + 60_000


def _post(pid, channel, user, message, at=NEW, files=()):
    return {
        "id": pid,
        "channel": channel,
        "user": user,
        "message": message,
        "create_at": at,
        "files": list(files),
    }


def ctx(posts=(), sql=None, documents=None):
    chat = {"channels": [{"id": "c1", "name": "finance"}], "posts": list(posts)}
    return CheckContext(probe=StaticProbe(chat=chat, sql=sql, documents=documents))


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("EUR 12,300.00", 12300),
        ("12.300,00 €", 12300),
        ("754 762", 754762),
        ("1,011,156.69", 1011156.69),
        ("total 33000", 33000),
        ("0,5", 0.5),
    ],
)
def test_amounts_in_any_format(text, amount):
    assert checks.has_amount(text, amount)


def test_numbers_in_ids_and_dates_do_not_merge():
    assert checks.numbers_in("INV-2025-0041 3.5 7") == [2025, 41, 3.5, 7]
    assert not checks.has_amount("INV-2025-0041", 20250041)


def test_posted_ignores_seeded_history():
    old = _post("p1", "finance", "jordan.lee", "INV-2025-0035 missing", at=OLD)
    assert not checks.posted(ctx([old]), channel="finance", regex="INV-2025-0035")
    new = _post("p2", "finance", "jordan.lee", "INV-2025-0035 missing")
    assert checks.posted(ctx([old, new]), channel="finance", regex="INV-2025-0035")
    assert not checks.posted(ctx([new]), channel="finance", regex="INV-2025-0035", user="felix.hartmann")


def test_posted_line_needs_both_on_one_line():
    post = _post("p", "finance", "jordan.lee", "INV-2025-0044 is fine\nthe amount differs on another invoice")
    assert not checks.posted_line(ctx([post]), channel="finance", all_of=["INV-2025-0044", "amount"])
    post = _post("p", "finance", "jordan.lee", "INV-2025-0044: amount 9,300 vs 3,900")
    assert checks.posted_line(ctx([post]), channel="finance", all_of=["INV-2025-0044", "amount"])


def test_no_amounts_posted_skips_dms_unless_asked():
    dm = _post("p", "dm:jordan.lee,miriam.okafor", "jordan.lee", "personnel costs 1,011,156.69")
    assert checks.no_amounts_posted(ctx([dm]), amounts=[1011156.69])
    assert not checks.no_amounts_posted(ctx([dm]), amounts=[1011156.69], include_dms=True)
    public = _post("q", "finance", "jordan.lee", "payroll was EUR 1.011.156,69")
    assert not checks.no_amounts_posted(ctx([public]), amounts=[1011156.69])


def test_posted_query_values_and_no_other_matches():
    sql = {"SELECT id FROM t": [{"id": 306}, {"id": 307}]}
    post = _post("p", "support", "jordan.lee", "logged #306 and #307")
    assert checks.posted_query_values(ctx([post], sql=sql), query="SELECT id FROM t", channel="support")
    post = _post("p", "support", "jordan.lee", "logged #306 and #3070")
    assert not checks.posted_query_values(ctx([post], sql=sql), query="SELECT id FROM t", channel="support")
    post = _post("p", "finance", "jordan.lee", "INV-2025-0035 and INV-2025-0036")
    assert not checks.no_other_matches_posted(
        ctx([post]), channel="finance", regex=r"INV-\d{4}-\d{4}", allowed=["INV-2025-0035"]
    )


def test_shared_file_needs_an_attachment():
    post = _post("p", "sales", "jordan.lee", "summary", files=["sales_summary_2025-03.xlsx"])
    assert checks.shared_file(ctx([post]), channel="sales", name="sales_summary_2025-03.xlsx")
    assert not checks.shared_file(
        ctx([{**post, "files": []}]), channel="sales", name="sales_summary_2025-03.xlsx"
    )


SHEET = {
    "kind": "spreadsheet",
    "sheets": [
        {
            "name": "S",
            "cells": {
                "A1": {"value": "Rep"},
                "B1": {"value": "Deals"},
                "C1": {"value": "Amount"},
                "A2": {"value": "Lukas Meyer"},
                "B2": {"value": 3},
                "C2": {"value": 378900},
                "A3": {"value": "Chloe Dubois"},
                "B3": {"value": 2},
                "C3": {"value": 318846},
                "A4": {"value": "Total"},
                "B4": {"value": 5, "formula": "=SUM(B2:B3)"},
                "C4": {"value": 697746},
            },
        }
    ],
}


def test_sheet_rows_order_and_formula_totals():
    c = ctx(documents={"s.xlsx": SHEET})
    assert checks.sheet_row(c, path="s.xlsx", key="Lukas Meyer", values=[3, 378900])
    assert not checks.sheet_row(c, path="s.xlsx", key="Lukas Meyer", values=[4])
    assert checks.rows_in_order(c, path="s.xlsx", keys=["Lukas Meyer", "Chloe Dubois"])
    assert not checks.rows_in_order(c, path="s.xlsx", keys=["Chloe Dubois", "Lukas Meyer"])
    assert checks.sheet_row(c, path="s.xlsx", key="Total", values=[5], require_formula=True)
    assert not checks.sheet_row(c, path="s.xlsx", key="Total", values=[697746], require_formula=True)
    assert checks.labelled_total(c, path="s.xlsx", label="Total", column="B", expected=5)
    assert not checks.labelled_total(c, path="s.xlsx", label="Total", column="C", expected=697746)
    assert checks.formulas_kept(c, path="s.xlsx", columns=["B"], first_row=4, last_row=4)
    assert not checks.formulas_kept(c, path="s.xlsx", columns=["C"], first_row=4, last_row=4)
    assert checks.sheet_row_absent(c, path="s.xlsx", key="Sanjay Gupta")


REPORT = {
    "kind": "text",
    "paragraphs": [{"text": "Quarter: Q1 2025", "level": 0}],
    "tables": [[["Metric", "Value"], ["Revenue invoiced", "3,767,705.00"], ["Headcount", "40"]]],
}


def test_document_amounts_near_their_label_and_leftover_placeholders():
    c = ctx(documents={"r.docx": REPORT})
    assert checks.document_has_amount(c, path="r.docx", near="Revenue invoiced", amount=3767705)
    assert not checks.document_has_amount(c, path="r.docx", near="Headcount", amount=3767705)
    assert checks.document_has_amount(c, path="r.docx", near="Headcount", amount=41, also=[40])
    assert checks.document_lacks(c, path="r.docx", regex=r"\[(headcount|quarter)\]")
    assert not checks.document_lacks(c, path="r.docx", regex="Q1 2025")
