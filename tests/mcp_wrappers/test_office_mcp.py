"""The office MCP server (python3 -m mcp_wrappers.office) as `agent`, over docker exec stdio.

/workspace starts with budget.xlsx (openpyxl: a formula without a cached result) and
report.docx (python-docx: headings, a table). Results are read back through the grader's
reader CLI (`read_document`, run as root), not only through the tool that wrote them.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from mcp_wrappers import PYTHON

pytestmark = pytest.mark.docker

TOOLS = {
    "list_files",
    "create_document",
    "read_sheet",
    "write_cells",
    "add_sheet",
    "rename_sheet",
    "read_document",
    "insert_text",
    "replace_text",
    "insert_table",
    "save_document",
    "export_document",
}

# tool: (good arguments, text the answer contains, bad arguments, text the error contains); run in this order.
CASES = {
    "list_files": ({}, "budget.xlsx  spreadsheet", {"folder": "../etc"}, "outside /workspace"),
    "read_sheet": (
        {"path": "budget.xlsx"},
        "| 5 | Total | =SUM(B2:B4) → 60 |",
        {"path": "budget.xlsx", "sheet": "Nope"},
        "no sheet 'Nope' in budget.xlsx: its sheets are 'Costs'",
    ),
    "write_cells": (
        {"path": "budget.xlsx", "start_cell": "C1", "rows": [["Share"], ["=B2/B$5"]]},
        "C2: =B2/B$5 → 0.166666666666667",
        {"path": "budget.xlsx", "start_cell": "1A", "rows": [[1]]},
        "bad cell address '1A'",
    ),
    "add_sheet": (
        {"path": "budget.xlsx", "name": "Draft"},
        "Sheets now: Costs, Draft",
        {"path": "budget.xlsx", "name": "Q1/Q2"},
        "characters sheets cannot use: /",
    ),
    "rename_sheet": (
        {"path": "budget.xlsx", "sheet": "draft", "new_name": "Notes"},
        "Sheets now: Costs, Notes",
        {"path": "budget.xlsx", "sheet": "Missing", "new_name": "X"},
        "no sheet 'Missing'",
    ),
    "create_document": (
        {"path": "plans/memo.docx"},
        "Created text plans/memo.docx",
        {"path": "memo.txt"},
        "unsupported file type '.txt'",
    ),
    "read_document": (
        {"path": "report.docx"},
        "# Quarterly report\nThis draft covers",
        {"path": "missing.docx"},
        "no such file: missing.docx",
    ),
    "insert_text": (
        {"path": "report.docx", "text": "Outlook", "style": "Heading 2", "after": "End of draft"},
        "Inserted 1 paragraph(s) after",
        {"path": "report.docx", "text": "x", "style": "Fancy"},
        "no paragraph style 'Fancy'",
    ),
    "replace_text": (
        {"path": "report.docx", "search": "draft", "replacement": "final"},
        "Replaced 2 occurrence(s)",
        {"path": "report.docx", "search": "no such words", "replacement": "x"},
        "'no such words' does not occur",
    ),
    "insert_table": (
        {"path": "report.docx", "rows": [["Quarter", "Sales"], ["Q2", 140]]},
        "Inserted a 2x2 table",
        {"path": "report.docx", "rows": []},
        "a table needs at least one row",
    ),
    "save_document": (
        {"path": "report.docx", "save_as": "copies/report.odt"},
        "Saved copies/report.odt",
        {"path": "report.docx", "save_as": "report.xlsx"},
        "cannot save a text as .xlsx",
    ),
    "export_document": (
        {"path": "budget.xlsx", "format": "pdf"},
        "Exported budget.xlsx to budget.pdf",
        {"path": "report.docx", "format": "csv"},
        "cannot export a text as .csv",
    ),
}


def read_documents(sandbox, *paths: str) -> dict:
    """The grader's view: the reader CLI as root."""
    result = sandbox.exec(
        [*PYTHON, "-m", "mcp_wrappers.office.read_document", *paths], user="root", timeout=120
    )
    assert result.ok, result.output
    return json.loads(result.output)


def test_tools_list_every_tool_with_a_valid_input_schema(office_mcp):
    tools = {t.name: t for t in office_mcp.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object" and tool.description
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description") or prop.get("type") == "boolean" or name == "format", (
                tool.name,
                name,
            )


@pytest.mark.parametrize("tool", list(CASES))
def test_tool_good_and_bad_input(office_mcp, tool):
    good, good_text, bad, bad_text = CASES[tool]
    ok = office_mcp.call(tool, good)
    assert not ok.is_error and good_text in ok.text, ok.text
    failed = office_mcp.call(tool, bad)
    assert failed.is_error and bad_text in failed.text, failed.text
    assert "Traceback" not in failed.text


def test_written_formula_value_is_read_back(office_mcp, office_sandbox):
    # Excel syntax (commas, Sheet!A1) as models write it; the reader shows LibreOffice's computed values.
    rows = [
        ["Region", "Sales", "Band"],
        ["North", 120, '=IF(B2>100,"high","low")'],
        ["South", "80", '=IF(B3>100,"high","low")'],
        ["Total", "=SUM(B2:B3)", "=Costs!B5+B4"],
        ["Since", "2024-03-31", "'007"],
    ]
    assert not office_mcp.call("create_document", {"path": "sales.xlsx"}).is_error
    out = office_mcp.call("write_cells", {"path": "sales.xlsx", "start_cell": "A1", "rows": rows})
    assert not out.is_error and "B4: =SUM(B2:B3) → 200" in out.text
    assert (
        "C4" in out.structured["formulas"] and out.structured["formulas"]["C4"]["value"] is None
    )  # no sheet Costs
    read = office_mcp.call("read_sheet", {"path": "sales.xlsx", "range": "B2:C4"}).structured["cells"]
    assert read["B4"] == {"value": 200, "formula": "=SUM(B2:B3)", "text": "200"}
    assert read["C2"]["value"] == "high" and read["C3"]["value"] == "low"
    cells = read_documents(office_sandbox, "sales.xlsx")["sales.xlsx"]["sheets"][0]["cells"]
    assert cells["B4"] == {"value": 200, "formula": "=SUM(B2:B3)", "text": "200"}
    assert cells["C2"] == {"value": "high", "formula": '=IF(B2>100,"high","low")', "text": "high"}
    assert cells["B3"]["value"] == 80 and cells["B3"]["formula"] is None  # a numeral string is a number
    assert cells["B5"]["text"] == "2024-03-31" and cells["C5"]["value"] == "007"


def test_seeded_formula_without_cached_value_is_computed(office_sandbox):
    # openpyxl writes no result for =SUM(B2:B4); a reader that trusted the file would see 0 or nothing.
    doc = read_documents(office_sandbox, "budget.xlsx", "/workspace/none.xlsx")
    cells = doc["budget.xlsx"]["sheets"][0]["cells"]
    assert cells["B5"]["formula"] == "=SUM(B2:B4)" and cells["B5"]["value"] == 60
    assert doc["/workspace/none.xlsx"] == {"error": "no such file: /workspace/none.xlsx"}


def test_text_document_reads_back_with_headings_and_tables(office_mcp, office_sandbox):
    assert not office_mcp.call("create_document", {"path": "notes.odt"}).is_error
    for args in (
        {"text": "Plan", "style": "Heading 1"},
        {"text": "Hire two people.\nOpen an office."},
        {"text": "Budget", "style": "Heading 2", "after": "Hire two"},
    ):
        assert not office_mcp.call("insert_text", {"path": "notes.odt", **args}).is_error
    assert not office_mcp.call(
        "insert_table", {"path": "notes.odt", "rows": [["Item", "Cost"], ["Desk", 300]]}
    ).is_error
    doc = read_documents(office_sandbox, "notes.odt")["notes.odt"]
    assert doc["kind"] == "text"
    assert [(p["text"], p["level"]) for p in doc["paragraphs"] if p["text"]] == [
        ("Plan", 1),
        ("Hire two people.", None),
        ("Budget", 2),
        ("Open an office.", None),
    ]
    assert doc["paragraphs"][0]["style"] == "Heading 1"
    assert doc["tables"] == [[["Item", "Cost"], ["Desk", "300"]]]


def test_paths_are_confined_to_the_workspace(office_mcp, office_sandbox):
    office_sandbox.exec("ln -sfn /etc /workspace/etc-link")
    for path in ("/etc/passwd.csv", "../x.xlsx", "etc-link/hosts.csv"):
        out = office_mcp.call("read_sheet", {"path": path})
        assert out.is_error and "outside /workspace" in out.text, out.text


def test_a_file_changed_by_another_program_is_reloaded(office_mcp, office_sandbox):
    office_sandbox.exec("printf 'name,qty\\npens,3\\n' > /workspace/stock.csv")
    first = office_mcp.call("read_sheet", {"path": "stock.csv"}).structured["cells"]
    assert first["B2"]["value"] == 3
    office_sandbox.exec("printf 'name,qty\\npens,7\\nink,2\\n' > /workspace/stock.csv")
    again = office_mcp.call("read_sheet", {"path": "stock.csv"}).structured["cells"]
    assert again["B2"]["value"] == 7 and again["A3"]["value"] == "ink"


def _soffice_pid(sandbox) -> str:
    return sandbox.exec("pgrep -u agent -f soffice.bin | head -n1").output.strip()


def test_office_restarts_after_libreoffice_dies(office_mcp, office_sandbox):
    assert not office_mcp.call("read_sheet", {"path": "budget.xlsx"}).is_error
    before = _soffice_pid(office_sandbox)
    assert before
    office_sandbox.exec(f"kill -9 {before}")
    out = office_mcp.call("read_sheet", {"path": "budget.xlsx"})
    assert not out.is_error and "=SUM(B2:B4) → 60" in out.text
    assert _soffice_pid(office_sandbox) not in ("", before)


def test_reader_runs_beside_the_agents_office(office_mcp, office_sandbox):
    pid = _soffice_pid(office_sandbox)
    assert pid and read_documents(office_sandbox, "report.docx")["report.docx"]["kind"] == "text"
    assert _soffice_pid(office_sandbox) == pid
    assert not office_mcp.call("read_document", {"path": "report.docx"}).is_error


def test_a_stuck_call_times_out_and_office_recovers(office_sandbox, office_connect):
    office = office_connect(office_sandbox, env={"EGYM_OFFICE_TIMEOUT_S": "3"})
    assert not office.call("read_sheet", {"path": "budget.xlsx"}).is_error
    pids = office_sandbox.exec("pgrep -u agent -f soffice.bin").output.split()
    office_sandbox.exec(
        f"kill -STOP {' '.join(pids)}"
    )  # every instance: the test can't tell which is this server's
    try:
        stuck = office.call("read_document", {"path": "report.docx"})
    finally:
        office_sandbox.exec(f"kill -CONT {' '.join(pids)}")
    assert stuck.is_error and "did not finish" in stuck.text and "restarted" in stuck.text
    assert not office.call("read_sheet", {"path": "budget.xlsx"}).is_error
