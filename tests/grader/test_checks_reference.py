"""docs/checks.md is the code's own reference: every check, its arguments, regenerated not hand-kept."""

from pathlib import Path

from grader.checks import builtin_names
from grader.checks_reference import reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_the_checks_page_is_up_to_date_with_the_code():
    assert DOC.read_text() == reference(), (
        "docs/checks.md is stale: run `.venv/bin/python -m grader.checks_reference > docs/checks.md`"
    )


def test_every_builtin_and_world_check_is_documented_with_its_arguments():
    text = reference()
    for name in builtin_names():
        assert f"### `{name}(" in text
    assert (
        "### `rubrics.acme.checks:sheet_row(path, key, values, sheet=None, tolerance=0.01, require_formula=False)`"
        in text
    )
    assert (
        "### `sql.value_equals(query, expected, params=None, column=None, tolerance=0.0, case_sensitive=True)`"
        in text
    )
    assert "(no description)" not in text
