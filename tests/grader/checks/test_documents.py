"""Document checks on real .xlsx/.ods/.docx/.odt files, read by LibreOffice inside a sandbox."""

from __future__ import annotations

import io

import pytest

from core.content_cache import ContentCache
from grader.checks import documents, files
from grader.checks.base import CheckContext
from grader.errors import StateError
from grader.probe import DOCUMENT_COPIES, SandboxProbe
from grader.score import grade
from tests.grader.conftest import make_rubric, py_item

pytestmark = pytest.mark.docker


def _xlsx() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Summary"
    for row in [
        ["Rep", "Deals", "Amount"],
        ["Ann", 3, 1200.5],
        ["Bob", 2, 300],
        ["Total", "=SUM(B2:B3)", "=SUM(C2:C3)"],
    ]:
        ws.append(row)
    wb.create_sheet("Notes")["A1"] = "checked by Dana"
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _docx() -> bytes:
    from docx import Document

    doc = Document()
    doc.add_heading("Q1 report", level=0)
    doc.add_heading("Summary", level=1)
    doc.add_paragraph("Revenue grew 12% on the back of three large deals.")
    doc.add_heading("Risks", level=2)
    table = doc.add_table(rows=3, cols=2)
    for r, row in enumerate([["Region", "Revenue"], ["North", "1,200"], ["South", "800"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _odt() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Meeting notes"))
    doc.text.addElement(P(text="Decision: move the launch to May."))
    buf = io.BytesIO()
    doc.write(buf)
    return buf.getvalue()


FILES = {
    "reports/summary.xlsx": _xlsx(),
    "reports/q1.docx": _docx(),
    "notes/meeting.odt": _odt(),
    "broken.xlsx": b"not a zip at all",
}


@pytest.fixture(scope="module")
def sandbox(live_sandbox):
    return live_sandbox(files=FILES)


@pytest.fixture(scope="module")
def ctx(sandbox):
    probe = SandboxProbe(sandbox)
    probe.prefetch([*FILES, "reports/none.docx"])  # one LibreOffice run for the whole module
    yield CheckContext(probe)
    probe.close()


def test_spreadsheet_values_and_formulas(ctx):
    path = "reports/summary.xlsx"
    assert documents.cell_value(ctx, path=path, cell="C2", expected=1200.5).passed
    assert documents.cell_value(ctx, path=path, cell="Summary.A4", expected="Total").passed
    assert documents.cell_value(ctx, path=path, cell="C4", expected=1500.5).passed  # computed by LibreOffice
    assert not documents.cell_value(ctx, path=path, cell="C4", expected=1500).passed
    assert documents.cell_formula(ctx, path=path, cell="B4", formula="=SUM(B2:B3)").passed
    assert not documents.cell_formula(ctx, path=path, cell="C2").passed
    assert documents.range_equals(
        ctx, path=path, range="A2:C3", expected=[["Ann", 3, 1200.5], ["Bob", 2, 300]]
    ).passed
    assert not documents.range_equals(
        ctx, path=path, range="A2:C3", expected=[["Ann", 3, 1200.5], ["Bob", 2, 301]]
    ).passed
    assert documents.sheet_exists(ctx, path=path, name="Notes").passed
    assert documents.cell_value(ctx, path=path, cell="Notes!A1", expected="checked by Dana").passed
    assert not documents.sheet_exists(ctx, path=path, name="Raw").passed


def test_text_documents(ctx):
    assert documents.heading_exists(ctx, path="reports/q1.docx", text="Summary", level=1).passed
    assert documents.heading_exists(ctx, path="reports/q1.docx", text="Risks").passed
    assert not documents.heading_exists(ctx, path="reports/q1.docx", text="Revenue grew").passed
    assert documents.document_contains(ctx, path="reports/q1.docx", text="three large deals").passed
    assert not documents.document_contains(ctx, path="reports/q1.docx", text="four large deals").passed
    assert documents.table_exists(
        ctx, path="reports/q1.docx", header=["Region", "Revenue"], row=["South", "800"]
    ).passed
    assert not documents.table_exists(ctx, path="reports/q1.docx", header=["Region", "Cost"]).passed
    assert documents.heading_exists(ctx, path="notes/meeting.odt", text="Meeting notes").passed
    assert documents.document_contains(
        ctx, path="/workspace/notes/meeting.odt", regex=r"launch to May"
    ).passed


def test_missing_and_corrupt_documents_fail_with_the_reason(ctx):
    with pytest.raises(StateError, match="cannot read"):
        documents.cell_value(ctx, path="broken.xlsx", cell="A1", expected=1)
    with pytest.raises(StateError, match="cannot read"):
        documents.heading_exists(ctx, path="reports/none.docx", text="x")
    assert files.file_exists(ctx, path="broken.xlsx").passed


def test_a_rubric_over_documents_reads_them_in_one_libreoffice_run(sandbox, monkeypatch, tmp_path):
    rubric = make_rubric(
        [
            py_item(
                "total",
                "documents.cell_value",
                args={"path": "reports/summary.xlsx", "cell": "C4", "expected": 1500.5},
            ),
            py_item(
                "formula",
                "documents.cell_formula",
                args={"path": "reports/summary.xlsx", "cell": "C4", "regex": "SUM"},
            ),
            py_item(
                "heading", "documents.heading_exists", args={"path": "reports/q1.docx", "text": "Summary"}
            ),
            py_item("missing", "documents.heading_exists", args={"path": "c.docx", "text": "Summary"}),
        ]
    )
    reads = ContentCache(tmp_path / "document-reads")  # none read yet
    runs = []

    def graded():
        with SandboxProbe(sandbox, reads=reads) as probe:
            original = probe._run_json
            monkeypatch.setattr(
                probe,
                "_run_json",
                lambda cmd, what, **kw: (
                    (what == "read_document" and runs.append(cmd)) or original(cmd, what, **kw)
                ),
            )
            return grade(rubric, probe)

    result = graded()
    assert [i.status for i in result.items if i.section != "damage"] == ["pass", "pass", "pass", "fail"]
    assert str(result) == "3/4" and not result.incomplete
    # One LibreOffice run, over the grader's own copies of the two files that exist (c.docx does not).
    assert len(runs) == 1 and sorted(path.rsplit("/", 1)[1] for path in runs[0][4:]) == [
        "q1.docx",
        "summary.xlsx",
    ]
    assert all(path.startswith(DOCUMENT_COPIES + "/") for path in runs[0][4:])
    # Graded again, the same bytes are not read again (grader.document_reads), with the same outcome.
    again = graded()
    assert len(runs) == 1
    assert [(i.status, i.evidence) for i in again.items] == [(i.status, i.evidence) for i in result.items]
