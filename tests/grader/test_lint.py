"""`egym lint`: each broken rubric is reported as file:json-path: message, with no traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gym.cli import app
from gym.lint import lint
from tests.grader.test_loader import json_values

REPO = Path(__file__).resolve().parents[2]
GOOD_ITEM = {
    "id": "ok",
    "description": "row",
    "points": 2,
    "kind": "python",
    "check": "sql.row_exists",
    "args": {"query": "SELECT 1"},
}


def _rubric(folder: Path, name: str, items: list | str) -> Path:
    path = folder / "rubrics" / "acme" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = items if isinstance(items, str) else json.dumps({"task": f"acme/{name}", "items": items}, indent=1)
    path.write_text(text)
    return path


@pytest.fixture
def broken(tmp_path) -> Path:
    """One rubric per kind of mistake, plus a good one using a task-specific check module."""
    pkg = tmp_path / "testchecks_lint"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "acme.py").write_text(
        "def totals_ok(ctx, *, sheet: str, tolerance: float = 0.0):\n    return True\n"
    )
    _rubric(tmp_path, "bad-json", '{"task": "acme/bad-json", "items": [\n  {"id": "a",}\n]}')
    _rubric(tmp_path, "unknown-check", [GOOD_ITEM, {**GOOD_ITEM, "id": "b", "check": "sql.row_exist"}])
    _rubric(
        tmp_path,
        "wrong-args",
        [
            GOOD_ITEM,
            {**GOOD_ITEM, "id": "b", "args": {"querry": "SELECT 1"}},
            {
                **GOOD_ITEM,
                "id": "c",
                "check": "testchecks_lint.acme:totals_ok",
                "args": {"sheet": "Q1", "tolerence": 1},
            },
        ],
    )
    _rubric(
        tmp_path,
        "duplicate-ids",
        [
            GOOD_ITEM,
            {**GOOD_ITEM},
            {**GOOD_ITEM, "id": "ok-{{value}}", "foreach": {"values": ["", "x", "x"]}},
        ],
    )
    _rubric(
        tmp_path,
        "missing-evidence",
        [
            GOOD_ITEM,
            {"id": "tone", "description": "polite", "points": 2, "kind": "judge", "prompt": "Is it polite?"},
        ],
    )
    _rubric(
        tmp_path, "unbound", [GOOD_ITEM, {**GOOD_ITEM, "id": "u-{{x}}", "foreach": {"values": [{"y": 1}]}}]
    )
    _rubric(
        tmp_path,
        "good",
        [
            GOOD_ITEM,
            {
                **GOOD_ITEM,
                "id": "task-check",
                "check": "testchecks_lint.acme:totals_ok",
                "args": {"sheet": "Q1"},
            },
        ],
    )
    return tmp_path / "rubrics"


def test_lint_reports_each_problem_with_file_and_json_path(broken):
    report = lint([broken])
    found = {(Path(p.file).stem, p.path): p.message for p in report.problems}
    assert found[("bad-json", "$")].startswith(
        "invalid JSON: Expecting property name enclosed in double quotes (line 2"
    )
    assert found[("unknown-check", "$.items[1].check")] == (
        "check 'sql.row_exist': grader.checks.sql has no check 'row_exist'; did you mean 'row_exists'?"
    )
    assert (
        found[("wrong-args", "$.items[1].args")]
        == "sql.row_exists: unexpected argument 'querry' (did you mean 'query'?)"
    )
    assert found[("wrong-args", "$.items[2].args")].endswith(
        "unexpected argument 'tolerence' (did you mean 'tolerance'?)"
    )
    assert found[("duplicate-ids", "$.items[1].id")] == "duplicate id 'ok' (also $.items[0])"
    assert found[("duplicate-ids", "$.items[2].id")] == "expands to id 'ok-x', already used by $.items[2]"
    assert found[("missing-evidence", "$.items[1]")] == "'evidence' is a required property"
    assert found[("unbound", "$.items[1].foreach")].startswith("placeholder {{x}} is not bound (bound: y)")
    assert not [p for p in report.problems if Path(p.file).stem == "good"]
    assert report.rubrics == 7


def test_egym_lint_cli_prints_file_path_lines_and_exits_non_zero(broken):
    result = CliRunner().invoke(app, ["lint", str(broken)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    # rubric problems name the line of their item's "id"
    assert re.search(
        rf"{broken}/acme/unknown-check.json:\d+: \$.items\[1\].check: check 'sql.row_exist'", "\n".join(lines)
    )
    assert lines[-1].startswith("FAILED: 0 task(s), 7 rubric(s)")
    assert "Traceback" not in result.output


def test_egym_lint_as_a_process_has_no_traceback(broken):
    proc = subprocess.run(
        [sys.executable, "-c", "from gym.cli import main; main()", "lint", str(broken)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert re.search(
        r"missing-evidence.json:\d+: \$.items\[1\]: 'evidence' is a required property", proc.stdout
    )


def test_lint_checks_tasks_and_pairs_them_with_rubrics(tmp_path):
    world = tmp_path / "tasks" / "acme"
    (world / "good" / "solution").mkdir(parents=True)
    (world / "world.yaml").write_text(
        "name: acme\ncompany: Acme\ndate: 2025-01-01\n"
        "agent: {name: A, title: T, email: a@x.example, chat_username: a}\n"
    )
    (world / "good" / "task.yaml").write_text("id: good\ntitle: T\nworld: acme\nprompt: p\n")
    (world / "good" / "solution" / "actions.yaml").write_text("- answer: done\n")
    (world / "typo").mkdir()
    (world / "typo" / "task.yaml").write_text(
        "id: typo\ntitle: T\nworld: acme\nprompt: p\nlimits: {max_turn: 3}\n"
    )
    _rubric(tmp_path, "good", [GOOD_ITEM])
    _rubric(tmp_path, "orphan", [GOOD_ITEM])
    report = lint([tmp_path / "tasks", tmp_path / "rubrics"])
    found = {
        (Path(p.file).parent.name if p.file.endswith("task.yaml") else Path(p.file).stem, p.path): p.message
        for p in report.problems
    }
    assert found[("typo", "$.limits.max_turn")] == "unknown key; did you mean 'max_turns'?"
    assert "no task 'acme/orphan'" in found[("orphan", "$.task")]
    assert len(report.problems) == 2, report.problems
    assert report.tasks == 2 and report.rubrics == 2


def test_lint_of_a_missing_path_is_a_problem(tmp_path):
    report = lint([tmp_path / "nowhere"])
    assert [str(p) for p in report.problems] == [
        f"{tmp_path / 'nowhere'}:$: no such task folder, family or instance"
    ]


FOREACH_ITEM = {
    "id": "v-{{value}}",
    "description": "value {{value}}",
    "points": 1,
    "kind": "python",
    "check": "sql.value_equals",
    "args": {"query": "SELECT {{value}}", "expected": "{{value}}"},
    "foreach": {"values": [1, 2]},
}


@st.composite
def mutated_rubric(draw):
    """A parameterised rubric with random JSON in one place: lint must report, never raise."""
    item = json.loads(json.dumps(FOREACH_ITEM))
    target = draw(st.sampled_from(["values", "args", "id", "check", "foreach"]))
    value = draw(json_values)
    if target == "values":
        item["foreach"]["values"] = value if isinstance(value, list) else [value]
    elif target == "args":
        item["args"][draw(st.text(max_size=8))] = value
    else:
        item[target] = value
    return {"task": "acme/fuzz", "items": [GOOD_ITEM, item]}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mutated_rubric())
def test_lint_never_raises_on_random_rubrics(tmp_path, data):
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(data))
    report = lint([path])
    assert all(re.match(rf"{re.escape(str(path))}:(\d+: )?\$", str(p)) for p in report.problems)
