"""`egym lint`: every task and rubric checked without starting anything.

Rubrics: schema, unique ids, a positive total, checks that import, args that fit
the check's signature, placeholders that are bound (for literal expansions), a
task for every rubric and a rubric for every task. Tasks: the task/world YAML
models, seed files present, the reference solution present.

A folder is searched for `task.yaml`/`world.yaml` files and for rubric `*.json`
files; JSON inside task/world folders (chat seeds), `*.schema.json` and files
under a `data/` folder (values files) are not rubrics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import EgymError, RubricError, TaskError
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


def _is_task_tree(path: Path, root: Path) -> bool:
    return any((p / "task.yaml").is_file() or (p / "world.yaml").is_file() for p in [path.parent, *path.parent.parents] if p.is_relative_to(root))


def discover(paths: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(task.yaml files, world.yaml files, rubric files) under the given paths."""
    tasks, worlds, rubrics = [], [], []
    for root in paths:
        if root.is_file():
            {"task.yaml": tasks, "world.yaml": worlds}.get(root.name, rubrics).append(root)
            continue
        tasks += sorted(root.rglob("task.yaml"))
        worlds += sorted(root.rglob("world.yaml"))
        rubrics += sorted(
            p for p in root.rglob("*.json")
            if not p.name.endswith(".schema.json") and "data" not in p.relative_to(root).parts[:-1]
            and not _is_task_tree(p, root)
        )
    return tasks, worlds, rubrics


_WHERE = re.compile(r"^([A-Za-z_]\w*(?:\.\w+)*): (.+)$")


def task_problem(file: Path, exc: EgymError) -> Problem:
    """A TaskError ('path: where: msg') as a Problem with a JSON-path-like location."""
    text = str(exc)
    for prefix in (f"{file}: ", f"{file.parent}: "):
        text = text.removeprefix(prefix)
    match = _WHERE.match(text)
    return Problem(str(file), f"$.{match.group(1)}", match.group(2)) if match else Problem(str(file), "$", text)


def lint_task(file: Path, report: LintReport) -> None:
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import load_task

    report.tasks += 1
    try:
        task = load_task(file.parent)
        overlay_tar((task.seed, task.path))
    except TaskError as exc:
        report.problems.append(task_problem(file, exc))
        return
    if not (task.path / task.solution).exists():
        report.problems.append(Problem(str(file), "$.solution", f"reference solution '{task.solution}' not found"))
    repo = file.resolve().parent.parent.parent
    rubric = repo / "rubrics" / task.world / f"{task.id}.json"
    if (repo / "rubrics").is_dir() and not rubric.is_file():
        report.problems.append(Problem(str(file), "$.id", f"no rubric for this task (expected {rubric})"))


def lint_world(file: Path, report: LintReport) -> None:
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import load_world

    try:
        world = load_world(file.parent)
        overlay_tar((world.seed, world.path))
    except TaskError as exc:
        report.problems.append(task_problem(file, exc))


def _item_problems(rubric: Rubric, index: int, file: str) -> list[Problem]:
    item = rubric.items[index]
    where = f"$.items[{index}]"
    if item.foreach is not None and item.foreach.seed_query is None:
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
        if item.foreach is not None and item.foreach.seed_query is not None:
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
                report.problems.append(Problem(str(file), f"$.items[{index}].id", f"expands to id {c.id!r}, already used by $.items[{other}]"))
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
        report.problems.append(Problem(str(file), "$.task", f"no task {rubric.task!r} (expected {tasks / world / task_id / 'task.yaml'})"))


def lint(paths: list[str | Path]) -> LintReport:
    """Check every task, world and rubric under `paths`; never raises for bad files."""
    report = LintReport()
    roots = [Path(p) for p in paths]
    for root in roots:
        if not root.exists():
            report.problems.append(Problem(str(root), "$", "no such file or folder"))
    tasks, worlds, rubrics = discover([r for r in roots if r.exists()])
    for file in worlds:
        lint_world(file, report)
    for file in tasks:
        lint_task(file, report)
    for file in rubrics:
        lint_rubric(file, report)
    return report
