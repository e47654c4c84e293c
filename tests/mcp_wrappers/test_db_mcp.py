"""The database MCP server (python3 -m mcp_wrappers.db) as `agent`, over docker exec stdio.

The initial state (conftest.DB_INITIAL_SQL) grants agent SELECT and UPDATE on employees and nothing on
salaries. Changes are checked through a separate psql connection, not through the tool.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

pytestmark = pytest.mark.docker

TOOLS = {"list_tables", "describe_table", "query", "execute"}

# tool: (good arguments, text the answer contains, bad arguments, text the error contains)
CASES = {
    "list_tables": (
        {},
        "employees: SELECT, UPDATE — Everyone on the payroll",
        {"schema": "nope"},
        "no schema 'nope'",
    ),
    "describe_table": (
        {"table": "employees"},
        "employees_pkey: PRIMARY KEY (id)",
        {"table": "employes"},
        "did you mean employees",
    ),
    "query": (
        {"sql": "SELECT name FROM employees WHERE dept = 'Sales' ORDER BY id"},
        "Ann Lee",
        {"sql": "SELECT nme FROM employees"},
        'column "nme" does not exist',
    ),
    "execute": (
        {"sql": "UPDATE employees SET hired = hired WHERE dept = 'Sales'"},
        "UPDATE 2 (2 rows affected)",
        {"sql": "INSERT INTO employees VALUES (9, 'Eve')"},
        "lacks INSERT privilege",
    ),
}


def test_tools_list_every_tool_with_a_valid_input_schema(db_mcp):
    tools = {t.name: t for t in db_mcp.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object" and tool.description


@pytest.mark.parametrize("tool", sorted(CASES))
def test_tool_good_and_bad_input(db_mcp, tool):
    good, good_text, bad, bad_text = CASES[tool]
    ok = db_mcp.call(tool, good)
    assert not ok.is_error and good_text in ok.text, ok.text
    failed = db_mcp.call(tool, bad)
    assert failed.is_error and bad_text in failed.text, failed.text
    assert "Traceback" not in failed.text


def _psql(sandbox, sql: str) -> str:
    """A new connection, as the superuser: what anyone else would see."""
    result = sandbox.exec(
        ["/usr/lib/postgresql/15/bin/psql", "-X", "-tA", "-c", sql], user="postgres", timeout=30
    )
    assert result.ok, result.output
    return result.output.strip()


def test_executed_update_is_visible_to_a_new_connection(db_mcp, db_sandbox):
    out = db_mcp.call("execute", {"sql": "UPDATE employees SET dept = 'Operations' WHERE id = 2"})
    assert not out.is_error and out.structured["statements"][0]["rowcount"] == 1
    assert _psql(db_sandbox, "SELECT dept FROM employees WHERE id = 2") == "Operations"


def test_forbidden_select_is_a_permission_tool_error(db_mcp):
    out = db_mcp.call(
        "query", {"sql": "SELECT e.name, s.amount FROM employees e JOIN salaries s ON s.employee_id = e.id"}
    )
    assert out.is_error
    assert "permission denied for table salaries" in out.text
    assert "role agent lacks SELECT privilege" in out.text and "(it holds: none)" in out.text
    update = db_mcp.call("execute", {"sql": "UPDATE salaries SET amount = amount * 2 WHERE employee_id = 1"})
    assert update.is_error and "lacks UPDATE and SELECT privileges" in update.text
    listed = db_mcp.call("list_tables", {}).structured
    assert {"name": "salaries", "privileges": []}.items() <= next(
        t for t in listed["tables"] if t["name"] == "salaries"
    ).items()


def test_query_is_read_only_and_changes_nothing(db_mcp, db_sandbox):
    out = db_mcp.call("query", {"sql": "DELETE FROM employees WHERE id = 3"})
    assert out.is_error and "use the execute tool" in out.text
    assert _psql(db_sandbox, "SELECT count(*) FROM employees WHERE id = 3") == "1"


def test_query_row_limit_and_structured_rows(db_mcp):
    out = db_mcp.call(
        "query", {"sql": "SELECT g AS n, g * 1.5 AS half FROM generate_series(1, 50) g", "limit": 10}
    )
    assert not out.is_error
    assert out.structured["columns"] == ["n", "half"] and len(out.structured["rows"]) == 10
    assert out.structured["rows"][1] == [2, 3] and out.structured["truncated"] is True
    assert "10 rows shown; more exist" in out.text
    too_many = db_mcp.call("query", {"sql": "SELECT 1", "limit": 5000})
    assert too_many.is_error and "limit" in too_many.text


def test_ddl_insert_returning_and_describe(db_mcp, db_sandbox):
    out = db_mcp.call(
        "execute",
        {
            "sql": (
                "CREATE TABLE scratch.notes (id serial PRIMARY KEY, body text NOT NULL DEFAULT '');"
                "INSERT INTO scratch.notes (body) VALUES ('a'), ('b') RETURNING id"
            )
        },
    )
    assert not out.is_error, out.text
    statements = out.structured["statements"]
    assert [s["status"] for s in statements] == ["CREATE TABLE", "INSERT 0 2"]
    assert statements[1]["rows"] == [[1], [2]]
    assert _psql(db_sandbox, "SELECT string_agg(body, ',' ORDER BY id) FROM scratch.notes") == "a,b"
    described = db_mcp.call("describe_table", {"table": "scratch.notes"})
    assert "body text NOT NULL DEFAULT ''::text" in described.text
    assert described.structured["privileges"] == ["SELECT", "INSERT", "UPDATE", "DELETE"]


def test_runaway_query_ends_at_the_statement_timeout(db_sandbox, db_connect):
    db = db_connect(db_sandbox, env={"EGYM_DB_STATEMENT_TIMEOUT_S": "1"})
    out = db.call("query", {"sql": "SELECT pg_sleep(30)"})
    assert out.is_error and "statement timeout" in out.text
    assert not db.call("query", {"sql": "SELECT 1"}).is_error  # the session is still usable
