"""Rubric lint without starting anything (`egym lint` runs it with gym.lint's task checks).

Schema, unique ids, a positive total, checks that import, args that fit the
check's signature, placeholders that are bound (for literal expansions), and a
task for every rubric.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.errors import RubricError
from grader.checks import resolve, signature_problem
from grader.expand import expand_item
from grader.loader import Problem, check_rubric
from grader.rubric import PythonItem, Rubric


@dataclass
class LintReport:
    problems: list[Problem] = field(default_factory=list)
    tasks: int = 0
    rubrics: int = 0
    items: int = 0
    points: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def _item_problems(rubric: Rubric, index: int, file: str) -> list[Problem]:
    item = rubric.items[index]
    where = f"$.items[{index}]"
    if item.foreach is not None and item.foreach.initial_query is None:
        try:
            concrete = expand_item(rubric, index)
        except RubricError as exc:
            return [Problem(file, f"{where}.foreach", str(exc).split(": ", 1)[-1])]
        if not concrete:
            return [Problem(file, f"{where}.foreach", "expands to no items")]
    else:
        concrete = [item]
    if not isinstance(item, PythonItem):
        return []
    try:
        fn = resolve(item.check, near=rubric.path)
    except RubricError as exc:
        return [Problem(file, f"{where}.check", str(exc))]
    for instance in concrete:
        problem = signature_problem(fn, instance.args)
        if problem:
            return [Problem(file, f"{where}.args", f"{item.check}: {problem}")]
    return []


def lint_rubric(file: Path, report: LintReport) -> None:
    report.rubrics += 1
    rubric, problems = check_rubric(file)
    report.problems += problems
    if rubric is None:
        return
    for index in range(len(rubric.items)):
        report.problems += _item_problems(rubric, index, str(file))
    expanded: dict[str, int] = {}
    for index, item in enumerate(rubric.items):
        if item.foreach is not None and item.foreach.initial_query is not None:
            report.items += 1
            continue
        try:
            concrete = expand_item(rubric, index)
        except RubricError:
            continue
        for c in concrete:
            other = expanded.get(c.id)
            # Plain duplicates were reported by the loader; here: ids that only collide after expansion.
            if other is not None and (item.foreach or rubric.items[other].foreach):
                report.problems.append(
                    Problem(
                        str(file),
                        f"$.items[{index}].id",
                        f"expands to id {c.id!r}, already used by $.items[{other}]",
                    )
                )
            expanded.setdefault(c.id, index)
            report.items += 1
            report.points += max(c.points, 0)
    _rubric_has_task(file, rubric, report)


def _rubric_has_task(file: Path, rubric: Rubric, report: LintReport) -> None:
    parts = file.resolve().parts
    if len(parts) < 3 or parts[-3] != "rubrics":
        return
    tasks = Path(*parts[:-3]) / "tasks"
    world, _, task_id = rubric.task.partition("/")
    if tasks.is_dir() and not (tasks / world / task_id / "task.yaml").is_file():
        report.problems.append(
            Problem(
                str(file),
                "$.task",
                f"no task {rubric.task!r} (expected {tasks / world / task_id / 'task.yaml'})",
            )
        )
