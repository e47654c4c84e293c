"""Every Acme task file, reference solution and rubric loads, and the library has the promised shape."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from grader.expand import expand_items
from grader.loader import load_rubric
from gym.lint import lint
from gym.policies.oracle import AnswerStep, load_solution
from gym.tasks import discover_tasks, load_world, world_of
from mcp_wrappers.apps import apps
from tests.tasks.conftest import ACME, ROOT, RUBRICS

TASKS = discover_tasks(ACME)


def _expanded(rubric):
    """Concrete items, with initial queries answered by a placeholder (their values do not change the count)."""
    return expand_items(rubric, {q: [{"digest": "seeded"}] for q in rubric.initial_queries()})


def test_world_loads_and_names_its_seed_files():
    world = load_world(ACME)
    assert world.name == "acme" and world.agent.db_role == "agent"
    for rel in [*world.initial_state.sql, *world.initial_state.chat]:
        assert (ACME / rel).is_file(), rel
    assert (ACME / world.initial_state.workspace).is_dir()


def test_library_shape():
    assert len(TASKS) >= 12
    splits = Counter(t.split for t in TASKS)
    assert splits["test"] >= 3 and splits["train"] and splits["val"]
    apps = Counter(len(t.apps) for t in TASKS)
    assert apps[1] and sum(n for k, n in apps.items() if k > 1) >= 6, "both single-app and cross-app tasks"


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_task_has_world_solution_and_rubric(task):
    assert world_of(task).name == "acme"
    steps = load_solution(task.path / task.solution)
    assert steps and isinstance(steps[-1], AnswerStep), "a solution ends with its final answer"
    tools = {s.tool.split(".")[0] for s in steps[:-1]}
    assert {t for t in tools if t in apps()} <= set(task.apps), (
        "the solution uses an app the task does not start"
    )
    rubric = load_rubric(RUBRICS / f"{task.id}.json")
    assert rubric.task == task.key
    items = _expanded(rubric)
    assert sum(i.points for i in items if i.points > 0) > 0


def test_lint_is_clean_even_under_strict():
    """No problem and no warning: every answer is a claim, no penalty is unfireable, no success claim scores."""
    report = lint([ROOT / "tasks" / "acme", RUBRICS])
    assert not report.problems + report.warnings, "\n".join(map(str, report.problems + report.warnings))


def test_flagship_is_big_and_mixed():
    rubric = load_rubric(RUBRICS / "q1-close.json")
    items = _expanded(rubric)
    assert len(items) >= 60 and sum(i.points for i in items if i.points > 0) >= 150
    checks = Counter(getattr(i, "check", "judge").split(":")[0].split(".")[0] for i in items)
    assert {"sql", "rubrics", "files", "documents", "judge"} <= set(checks)
    assert any(i.points < 0 for i in items) and any(i.kind == "judge" for i in items)
    assert any("payroll" in i.id for i in items if i.points < 0)


def test_every_penalty_and_baseline_item_says_why():
    for path in sorted(RUBRICS.glob("*.json")):
        for item in json.loads(path.read_text())["items"]:
            if item["points"] < 0 or item.get("gate"):
                assert item.get("baseline_ok") and item.get("baseline_reason"), f"{path.name}: {item['id']}"


def test_rubric_values_match_the_generated_world(acme_generator):
    """Rubrics carry expected values literally; they must follow the generator's facts."""
    from acmegen import facts

    f = facts.collect(acme_generator.build_world())
    overdue = {v["name"]: v["amount"] for v in _foreach(RUBRICS / "collections-list.json", "amount-{{name}}")}
    assert overdue == {k: float(v) for k, v in f["overdue"].items()}
    claims = {v["id"]: v["status"] for v in _foreach(RUBRICS / "q1-close.json", "status-{{id}}")}
    wanted = {"approve": "approved", "reject": "rejected"}
    assert claims == {c["id"]: wanted[c["outcome"]] for c in f["pending_claims"] if c["outcome"] in wanted}
    reps = {
        v["rep"]: (v["deals"], v["amount"])
        for v in _foreach(RUBRICS / "sales-summary-sheet.json", "rep-{{rep}}")
    }
    assert reps == {k: (v["deals"], float(v["amount"])) for k, v in f["march_won"].items()}


def _foreach(path, item_id):
    item = next(i for i in json.loads(path.read_text())["items"] if i["id"] == item_id)
    return item["foreach"]["values"]
