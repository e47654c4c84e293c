"""`egym lint [PATHS]` and `egym grade ROLLOUT`: task, rubric and family authoring commands."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from gym.cli.errors import friendly
from gym.cli.options import STORE

console = Console(highlight=False, soft_wrap=True)


def lint(
    paths: list[str] = typer.Argument(
        None,
        help="Task/world/rubric files or folders, a world (acme), a hand-written task (acme/q1-close), a family "
        "(acme/order-status, tasks/acme/families/order_status.py), an instance (acme/order-status-l0-s3) or a "
        "world's families (tasks/acme/families); default: every world (egym tasks list) with its rubrics.",
    ),
    strict: bool = typer.Option(False, "--strict", help="Fail on warnings too."),
) -> None:
    """Check tasks, rubrics and families: schema, check references, argument names, ids, points, evidence;
    a family's problems are shown at its source line."""
    from gym.lint import lint as run_lint
    from gym.worlds import world_dirs

    roots = paths or list(world_dirs())
    if not roots:
        console.print("nothing to lint: no world is installed and there is no ./tasks; pass paths")
        raise typer.Exit(2)
    report = run_lint(roots)
    for problem in report.problems:
        console.print(str(problem), markup=False)
    for warning in report.warnings:
        console.print(str(warning), style="yellow", markup=False)
    failed = bool(report.problems) or (strict and bool(report.warnings))
    status = "[red]FAILED[/red]" if failed else "[green]ok[/green]"
    console.print(
        f"{status}: {report.tasks} task(s), {report.rubrics} rubric(s), {report.items} item(s) worth "
        f"{report.points} point(s); {len(report.problems)} problem(s), {len(report.warnings)} warning(s)"
    )
    if failed:
        raise typer.Exit(1)


def grade(
    rollout: str = typer.Argument(
        ..., help="Rollout id (or a unique prefix), see `egym runs` / `egym show`."
    ),
    store: str | None = STORE,
    rubric: Path | None = typer.Option(
        None, "--rubric", help="Grade with this rubric file instead of the task's."
    ),
    tasks: Path | None = typer.Option(
        None,
        "--tasks",
        help="Folder holding <world>/<task-id>/task.yaml (default: the task's world, wherever it is installed).",
    ),
    save: bool = typer.Option(True, "--save/--no-save", help="Replace the stored grade with the new one."),
    judge_same_model: bool = typer.Option(
        False, "--judge-same-model", help="Allow the policy's model as judge."
    ),
    items: bool = typer.Option(
        False, "--items", help="Every rubric item, however many (large grades are summarised)."
    ),
) -> None:
    """Re-grade a stored rollout: replay its tool calls in a fresh sandbox, grade with the current rubric."""
    import asyncio

    from core.errors import StoreError
    from grader.judge import JudgeOptions
    from grader.loader import load_rubric
    from gym.episode import make_judge
    from gym.regrade import replay_and_grade, replay_differences
    from gym.rollout import passed
    from gym.store import Store
    from gym.task_refs import resolve
    from gym.tasks import load_task

    db = Store(store)
    row = db.get_rollout(rollout)
    trajectory = row.trajectory_model()
    if trajectory is None:
        raise StoreError(
            f"rollout {row.id} has no stored trajectory (status {row.status}): nothing to replay"
        )
    task = load_task(tasks / row.task) if tasks else resolve([row.task])[0]
    judge = make_judge(trajectory.model, JudgeOptions(allow_same_model=judge_same_model))
    old = row.grade_model()
    new, replayed = asyncio.run(
        replay_and_grade(task, trajectory, rubric=load_rubric(rubric) if rubric else None, judge=judge)
    )
    from gym.batch.view import grade_view

    console.print(f"{new.task}: {new.summary()}" + (f"  (was {old})" if old else ""), markup=False)
    console.print(grade_view(new, items=items, was=old))
    for line in replay_differences(trajectory, replayed):
        console.print(f"[yellow]replay drift[/yellow]: {line}")
    if save:
        db.regrade(row.id, new, passed=passed(new, task.pass_threshold))
        console.print(f"saved to rollout {row.id}")


def register(app: typer.Typer) -> None:
    app.command(name="lint")(friendly(lint))
    app.command(name="grade")(friendly(grade))
