"""`egym lint` of families: one family or instance by ref or file, problems at the family's source line,
a broken family reported by name while the others lint, no empty selection, no family named like a task."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.errors import TaskError
from gym.authoring import scaffold, write_scaffold
from gym.cli import app
from gym.families import FamilyError, families
from gym.lint import lint
from gym.task_refs import resolve

WORLD_YAML = "name: w\ncompany: W\ndate: 2025-01-01\nagent: {name: A, title: T, email: a@x.example, chat_username: a}\n"

# Two items with a wrong argument: one made by a helper called at line 14, one written inline in the
# Instance constructed at line 16.
BAD_ITEM = """from gym.families import Instance

TITLE = "Bad item"
LEVELS = (0, 1)


def row_item(item_id, query):
    return {"id": item_id, "description": "a row", "points": 1, "kind": "python",
            "check": "sql.row_exists", "args": {"querry": query}}


def generate(world, rng, level):
    items = [
        row_item("row", "SELECT 1"),
    ]
    return Instance(
        prompt="Answer with the number of rows.",
        rubric_items=items + [
            {"id": "inline", "description": "d", "points": 1, "kind": "python",
             "check": "sql.row_exists", "args": {"query": "SELECT 1", "parms": {}}},
        ],
        solution=[{"answer": "one"}],
    )
"""
RAISING = """from gym.families import Instance

TITLE = "Raising"
LEVELS = (0,)


def generate(world, rng, level):
    return {}["missing"]
"""


@pytest.fixture
def world(tmp_path, monkeypatch) -> Path:
    """tasks/w in a fresh working directory: refs (w/<family>) resolve there, and instances go to its .egym."""
    monkeypatch.chdir(tmp_path)
    world = tmp_path / "tasks" / "w"
    (world / "families").mkdir(parents=True)
    (world / "world.yaml").write_text(WORLD_YAML)
    write_scaffold(world, "stock-check")
    return world


def _family(world: Path, name: str, source: str) -> None:
    (world / "families" / f"{name}.py").write_text(source)


def _lines(report) -> list[str]:
    return [str(p) for p in report.problems + report.warnings]


def test_a_family_ref_its_file_and_an_instance_id_lint_only_that(world):
    _family(world, "raising", RAISING)
    for ref in ("w/stock-check", "tasks/w/families/stock_check.py"):
        report = lint([ref])
        assert report.tasks == 3 and report.rubrics == 3 and not _lines(report), _lines(report)
    one = lint(["w/stock-check-l0-s7"])
    assert one.tasks == 1 and not _lines(one)
    assert _lines(lint(["w/stock-chek"])) == [
        "w/stock-chek:$: no family, instance or task 'stock-chek' in tasks/w; did you mean 'stock-check'?"
    ]
    assert _lines(lint(["tasks/w/families/_helpers.py"]))[0].startswith(
        "tasks/w/families/_helpers.py:$: not a family"
    )


def test_problems_of_an_instance_point_at_the_line_of_the_family_that_made_them(world):
    _family(world, "bad_item", BAD_ITEM)
    report = lint(["w/bad-item-l1-s2"])
    rubric = ".egym/instances/rubrics/w/bad-item-l1-s2.json"
    assert _lines(report) == [
        "tasks/w/families/bad_item.py:14: w/bad-item-l1-s2 $.items[0].args: sql.row_exists: unexpected "
        f"argument 'querry' (did you mean 'query'?) (in {rubric}:6)",
        # written inline: located at the Instance that holds it
        "tasks/w/families/bad_item.py:16: w/bad-item-l1-s2 $.items[1].args: sql.row_exists: unexpected "
        f"argument 'parms' (did you mean 'params'?) (in {rubric}:16)",
    ]


def test_a_broken_family_is_reported_at_its_line_and_the_others_still_lint(world):
    _family(world, "bad_syntax", 'TITLE = "x"\nLEVELS = (0,)\ndef generate(world, rng, level)\n    pass\n')
    _family(world, "raising", RAISING)
    report = lint([world / "families"])
    assert _lines(report) == [
        "tasks/w/families/bad_syntax.py:3: family w/bad-syntax: failed to import: SyntaxError: "
        "expected ':' (bad_syntax.py, line 3)",
        "tasks/w/families/raising.py:8: family w/raising level 0 seed 0: the generator failed: KeyError: "
        "'missing'",
    ]
    assert report.tasks == 3  # stock-check's seeds 0-2
    # The other commands: a good family still resolves, the broken one is one line with its file and line.
    assert [t.key for t in resolve(["w/stock-check"], seeds="0")] == ["w/stock-check-l0-s0"]
    with pytest.raises(FamilyError, match=r"^tasks/w/families/bad_syntax.py:3: family w/bad-syntax: failed"):
        resolve(["w/bad-syntax"])
    with pytest.raises(FamilyError, match="bad_syntax.py:3"):
        families(world.resolve())  # `egym tasks list` and the dashboard: the world fails, naming the family


def test_lint_of_a_family_ref_shows_the_source_line_and_fails(world):
    _family(world, "bad_item", BAD_ITEM)
    result = CliRunner().invoke(app, ["lint", "tasks/w/families/bad_item.py"])
    assert result.exit_code == 1, result.output
    assert re.search(
        r"^tasks/w/families/bad_item.py:14: w/bad-item-l0-s0 \$.items\[0\].args", result.output, re.M
    )
    assert result.output.splitlines()[-1].startswith("FAILED: 6 task(s), 6 rubric(s)")


@pytest.mark.parametrize("selection", ["families", "empty"])
def test_an_empty_selection_is_an_error(tmp_path, monkeypatch, selection):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w" / "families").mkdir(parents=True)
    (tmp_path / "w" / "world.yaml").write_text(WORLD_YAML)
    (tmp_path / "empty").mkdir()
    path = "w/families" if selection == "families" else "empty"
    with pytest.raises(
        TaskError, match=f"^nothing to lint in {path}: no task, world, rubric or family there$"
    ):
        lint([path])
    result = CliRunner().invoke(app, ["lint", path])
    assert result.exit_code == 2 and "ok" not in result.output
    assert (
        result.output.strip() == f"error: nothing to lint in {path}: no task, world, rubric or family there"
    )


def test_a_family_named_like_a_hand_written_task_is_refused_and_reported(world):
    (world / "report" / "solution").mkdir(parents=True)
    (world / "report" / "task.yaml").write_text("id: report\ntitle: T\nworld: w\nprompt: p\n")
    (world / "report" / "solution" / "actions.yaml").write_text("- answer: done\n")
    with pytest.raises(TaskError, match=r"'report': the hand-written task .*tasks/w/report has that name"):
        write_scaffold(world, "report")
    result = CliRunner().invoke(app, ["new", "family", "report", "--world", "tasks/w"])
    assert result.exit_code == 2 and "has that name" in result.output
    assert not (world / "families" / "report.py").exists()
    # Made by hand anyway, and a task named like an instance of an existing family: lint says so.
    (world / "families" / "report.py").write_text(scaffold("report"))
    (world / "stock-check-l0-s1").mkdir()
    (world / "stock-check-l0-s1" / "task.yaml").write_text(
        "id: stock-check-l0-s1\ntitle: T\nworld: w\nprompt: p\n"
    )
    clashes = [p for p in lint([world]).problems if "rename one of them" in p.message]
    assert [str(p) for p in clashes] == [
        "tasks/w/families/report.py:family w/report: w/report names this family, not the hand-written task "
        "tasks/w/report: rename one of them",
        "tasks/w/families/stock_check.py:family w/stock-check: w/stock-check-l0-s1 names an instance of this "
        "family, not the hand-written task tasks/w/stock-check-l0-s1: rename one of them",
    ]
