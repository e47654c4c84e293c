"""The database server's pure helpers: privilege guesses for error messages, value and table rendering."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from mcp_wrappers.db.errors import needed_privileges
from mcp_wrappers.db.render import json_value, row_summary, text_table


@pytest.mark.parametrize(
    ("sql", "table", "needed"),
    [
        ("SELECT * FROM salaries", "salaries", ["SELECT"]),
        ("DELETE FROM salaries", "salaries", ["DELETE"]),
        ("delete from public.salaries where id = 1", "salaries", ["DELETE", "SELECT"]),
        ("UPDATE salaries SET amount = 1", "salaries", ["UPDATE"]),
        (
            '-- raise\nUPDATE "salaries" SET amount = 1 WHERE employee_id = 2',
            "salaries",
            ["UPDATE", "SELECT"],
        ),
        ("INSERT INTO salaries VALUES (1, 2)", "salaries", ["INSERT"]),
        ("INSERT INTO audit SELECT * FROM salaries", "salaries", ["SELECT"]),
        ("TRUNCATE TABLE salaries", "salaries", ["TRUNCATE"]),
    ],
)
def test_needed_privileges(sql, table, needed):
    assert needed_privileges(sql, table) == needed


def test_json_values_keep_their_meaning():
    assert json_value(Decimal("92500.50")) == 92500.5 and json_value(Decimal("3")) == 3
    assert json_value(Decimal("1234567890.1234567890")) == "1234567890.1234567890"
    assert json_value(dt.date(2024, 3, 31)) == "2024-03-31"
    assert json_value(b"\x01\xff") == "\\x01ff"
    assert json_value(float("nan")) == "nan"
    assert json_value({"a": [Decimal("1.5")]}) == {"a": [1.5]}


def test_text_table_aligns_and_clips():
    table = text_table(["id", "note"], [[1, None], [22, "x" * 100]])
    lines = table.splitlines()
    assert lines[0] == "id | note" and lines[1].startswith("---+-")
    assert lines[2] == "1  | NULL" and lines[3].endswith("…") and len(lines[3]) == 5 + 80
    assert row_summary(1, False, 100) == "(1 row)" and "more exist" in row_summary(100, True, 100)
