"""SQL checks against real PostgreSQL in a sandbox, each passing and failing on a purpose-built state."""

from __future__ import annotations

import pytest

from grader.checks import sql
from grader.checks.base import CheckContext
from grader.errors import StateError
from grader.probe import SandboxProbe

pytestmark = pytest.mark.docker

SEED = """
CREATE TABLE invoices (number text PRIMARY KEY, customer text, amount numeric(10,2), due date, status text);
INSERT INTO invoices VALUES
  ('INV-1', 'Globex', 1200.50, '2025-03-01', 'paid'),
  ('INV-2', 'O''Brien & Co', 80.00, '2025-03-15', 'open'),
  ('INV-3', 'Initech', 15.25, '2025-04-01', 'open');
GRANT SELECT ON invoices TO agent;
CREATE SEQUENCE invoice_numbers;
"""


@pytest.fixture(scope="module")
def ctx(live_sandbox):
    probe = SandboxProbe(live_sandbox(sql=SEED))
    yield CheckContext(probe)
    probe.close()


def test_row_exists_and_absent(ctx):
    q = "SELECT 1 FROM invoices WHERE customer = %(c)s AND status = 'open'"
    assert sql.row_exists(ctx, query=q, params={"c": "O'Brien & Co"}).passed
    assert not sql.row_exists(ctx, query=q, params={"c": "Globex"}).passed
    assert sql.row_absent(ctx, query=q, params={"c": "Globex"}).passed
    absent = sql.row_absent(ctx, query=q, params={"c": "Initech"})
    assert not absent.passed and "1 row(s)" in absent.evidence


def test_value_equals_with_types_and_tolerance(ctx):
    q = "SELECT amount, due FROM invoices WHERE number = %(n)s"
    assert sql.value_equals(ctx, query=q, params={"n": "INV-1"}, expected=1200.5).passed
    assert sql.value_equals(ctx, query=q, params={"n": "INV-1"}, expected="1200.50").passed  # CSV-style text
    assert sql.value_equals(ctx, query=q, params={"n": "INV-1"}, expected=1200, tolerance=1).passed
    assert sql.value_equals(ctx, query=q, params={"n": "INV-1"}, column="due", expected="2025-03-01").passed
    wrong = sql.value_equals(ctx, query=q, params={"n": "INV-1"}, expected=1200)
    assert not wrong.passed and wrong.evidence == "got 1200.5; expected 1200"
    assert not sql.value_equals(ctx, query=q, params={"n": "INV-9"}, expected=1).passed
    status = "SELECT status FROM invoices WHERE number = 'INV-2'"
    assert sql.value_equals(ctx, query=status, expected="OPEN", case_sensitive=False).passed
    assert not sql.value_equals(ctx, query=status, expected="OPEN").passed


def test_count(ctx):
    q = "SELECT number FROM invoices WHERE status = 'open'"
    assert sql.count(ctx, query=q, equals=2).passed
    assert not sql.count(ctx, query=q, equals=3).passed
    assert sql.count(ctx, query=q, min=1, max=2).passed
    assert not sql.count(ctx, query=q, min=3).passed


def test_query_equals_as_a_set_and_in_order(ctx):
    q = "SELECT number, amount FROM invoices WHERE status = 'open' ORDER BY number"
    assert sql.query_equals(ctx, query=q, expected=[["INV-3", 15.25], ["INV-2", 80]]).passed
    assert sql.query_equals(ctx, query=q, expected=[{"number": "INV-2"}, {"number": "INV-3"}]).passed
    assert sql.query_equals(ctx, query=q, expected=[["INV-2", 80], ["INV-3", 15.25]], ordered=True).passed
    assert not sql.query_equals(ctx, query=q, expected=[["INV-3", 15.25], ["INV-2", 80]], ordered=True).passed
    missing = sql.query_equals(ctx, query=q, expected=[["INV-2", 80]])
    assert not missing.passed and "unexpected" in missing.evidence and "INV-3" in missing.evidence
    extra = sql.query_equals(ctx, query=q, expected=[["INV-2", 80], ["INV-3", 15.25], ["INV-4", 1]])
    assert not extra.passed and "missing" in extra.evidence


def test_a_broken_state_is_a_state_error_and_the_session_stays_read_only(ctx):
    with pytest.raises(StateError, match='relation "nope" does not exist'):
        ctx.probe.sql("SELECT * FROM nope")
    with pytest.raises(StateError, match="syntax error"):
        ctx.probe.sql("DELETE FROM invoices")  # only SELECT-like queries
    with pytest.raises(StateError, match="read-only transaction|permission denied"):
        ctx.probe.sql("SELECT nextval('invoice_numbers')")
    assert ctx.probe.sql("SELECT current_setting('transaction_read_only') AS ro") == [{"ro": "on"}]
    # The grader's own role: reads everything, owns nothing, may write nothing even outside the session setting.
    assert ctx.probe.sql(
        "SELECT current_user AS role, pg_has_role('pg_read_all_data', 'member') AS reads_all, "
        "has_table_privilege('invoices', 'UPDATE') AS updates"
    ) == [{"role": "grader", "reads_all": True, "updates": False}]
    assert len(ctx.probe.sql("SELECT * FROM invoices")) == 3  # the session survives the errors


def test_params_are_bound_as_literals(ctx):
    assert ctx.probe.sql(
        "SELECT %(a)s::int + 1 AS x, %(b)s AS y, '100%%' AS pct", {"a": 41, "b": "it's"}
    ) == [{"x": 42, "y": "it's", "pct": "100%"}]
    assert ctx.probe.sql("SELECT %s AS x", [None]) == [{"x": None}]
    assert ctx.probe.sql("SELECT '100%' AS pct") == [{"pct": "100%"}]  # no params: % is literal
    with pytest.raises(ValueError, match="no param 'c'"):
        ctx.probe.sql("SELECT %(c)s", {"a": 1})


def test_results_are_cached_per_probe(ctx):
    first = ctx.probe.sql("SELECT now() AS t")
    assert ctx.probe.sql("SELECT now() AS t") == first


def test_prefetched_queries_are_pipelined_and_keep_their_own_errors(live_sandbox):
    probe = SandboxProbe(live_sandbox(sql=SEED))
    try:
        probe.prefetch(
            queries=[
                ("SELECT count(*) AS n FROM invoices", None),
                ("SELECT * FROM nope", None),
                ("SELECT %(x)s AS x", {"x": "a'b"}),
                ("SELECT %(y)s", {"x": 1}),
            ]
        )
        assert probe.sql("SELECT count(*) AS n FROM invoices") == [{"n": 3}]
        with pytest.raises(StateError, match='"nope" does not exist'):
            probe.sql("SELECT * FROM nope")
        assert probe.sql("SELECT %(x)s AS x", {"x": "a'b"}) == [{"x": "a'b"}]
        with pytest.raises(ValueError, match="no param 'y'"):
            probe.sql("SELECT %(y)s", {"x": 1})
    finally:
        probe.close()
