"""The Acme world's initial state is generated, not hand-edited: regenerating it must reproduce every byte."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.tasks.conftest import ACME

CHECKED_IN = ACME / "initial_state"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_regenerated_initial_state_is_byte_identical(tmp_path):
    for lib in ("openpyxl", "docx", "odf"):
        if __import__("importlib.util").util.find_spec(lib) is None:
            pytest.fail(
                f"{lib} is missing: the document generator needs openpyxl, python-docx and odfpy (test extra)"
            )
    out = tmp_path / "initial_state"
    run = subprocess.run(
        [sys.executable, str(ACME / "generate.py"), "--out", str(out)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    expected, got = _files(CHECKED_IN), _files(out)
    assert sorted(got) == sorted(expected), "the generator writes a different set of files than is checked in"
    changed = [name for name in expected if expected[name] != got[name]]
    assert not changed, (
        f"regenerate with `python tasks/acme/generate.py`: these differ from the checked-in initial state: {changed}"
    )


def test_another_seed_gives_another_world_with_the_same_planted_facts(acme_generator):
    base, other = acme_generator.build_world(), acme_generator.build_world(seed=7)
    assert base["deals"].rows != other["deals"].rows
    # what tasks depend on is planted, not drawn
    for w in (base, other):
        pending = [c for c in w["expense_claims"].dicts() if c["status"] == "pending"]
        assert len(pending) == 18
        assert w.facts["initech_invoice"].startswith("INV-2025-")


def test_generated_rows_are_internally_consistent(acme_generator):
    w = acme_generator.build_world()
    ids = {
        name: {r[0] for r in w[name].rows}
        for name in ("employees", "customers", "products", "deals", "invoices")
    }
    for inv in w["invoices"].dicts():
        assert inv["customer_id"] in ids["customers"] and inv["deal_id"] in ids["deals"]
        assert inv["due_date"] >= inv["issue_date"]
    totals = Counter()
    for line in w["invoice_lines"].dicts():
        assert line["line_total"] == (line["quantity"] * line["unit_price"]).quantize(line["line_total"])
        totals[line["invoice_id"]] += line["line_total"]
    for inv in w["invoices"].dicts():
        assert totals[inv["id"]] == inv["total"], inv["number"]
    paid = Counter()
    for p in w["payments"].dicts():
        paid[p["invoice_id"]] += p["amount"]
    for inv in w["invoices"].dicts():
        if inv["number"] == w.facts["initech_invoice"]:
            assert paid[inv["id"]] == 2 * inv["total"]  # the planted double charge
        elif inv["status"] == "paid":
            assert paid[inv["id"]] == inv["total"], inv["number"]
        elif inv["status"] in ("sent", "draft", "void"):
            assert paid[inv["id"]] == 0, inv["number"]
    for e in w["employees"].dicts():
        assert e["manager_id"] is None or e["manager_id"] in ids["employees"]
    for c in w["expense_claims"].dicts():
        assert c["expense_date"] <= c["submitted_on"] <= dt.date(2025, 4, 7)
        assert (c["status"] == "pending") == (c["reviewed_by"] is None)


def test_sql_literals_escape_quotes(acme_generator):
    from acmegen.sqlwrite import insert, literal

    assert literal("O'Brien") == "'O''Brien'"
    assert literal(None) == "NULL" and literal(True) == "true"
    assert insert("t", ["a", "b"], [(1, "x")]) == "INSERT INTO t (a, b) VALUES\n(1, 'x');\n"
