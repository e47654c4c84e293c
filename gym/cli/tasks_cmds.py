"""`egym tasks`: the task library: hand-written tasks, families and their instances."""

from __future__ import annotations

from pathlib import Path

import typer

from gym.cli.errors import friendly

tasks_app = typer.Typer(
    help="Tasks and task families: list, show one, sample instances.", no_args_is_help=True
)
WORLDS = typer.Argument(None, help="World folders (default: every tasks/<world>).")


def _worlds(worlds: list[Path] | None) -> list[Path]:
    return [w.resolve() for w in (worlds or sorted(p.parent for p in Path("tasks").glob("*/world.yaml")))]


@tasks_app.command("list")
@friendly
def list_(worlds: list[Path] = WORLDS) -> None:
    """Every family (its levels and split) and every hand-written task, per world."""
    from rich.console import Console
    from rich.table import Table

    from gym.families import families
    from gym.tasks import discover_tasks

    table = Table(title="tasks", title_justify="left")
    for column in ("world", "family / task", "levels", "split", "title"):
        table.add_column(column)
    count = 0
    for world in _worlds(worlds):
        for name, family in families(world).items():
            levels = ",".join(map(str, family.levels))
            table.add_row(
                world.name,
                name,
                levels,
                f"{family.split} (by seed)" if family.split == "train" else family.split,
                family.title,
            )
            count += 1
        for task in discover_tasks(world):
            table.add_row(world.name, task.id, "-", task.split, task.title)
    Console().print(table)
    typer.echo(f"{count} families (instances: <family>-l<level>-s<seed>, any seed)")


@tasks_app.command("show")
@friendly
def show(
    ref: str = typer.Argument(..., help="An instance id (acme/product-price-l0-s3) or a task folder."),
) -> None:
    """The task as the agent gets it, its split, and its rubric's items and points."""
    from grader.loader import load_rubric, rubric_for_task
    from gym.families import resolve

    tasks = resolve([ref])
    if len(tasks) != 1:
        raise typer.BadParameter(f"{ref} names {len(tasks)} tasks; give one instance id")
    task = tasks[0]
    rubric = load_rubric(rubric_for_task(task))
    typer.echo(f"{task.key}  split {task.split}  apps {', '.join(task.apps)}  folder {task.path}")
    typer.echo(f"\n{task.prompt}\n")
    for item in rubric.items:
        typer.echo(f"  {item.points:>4}  {item.id}: {item.description}")
    typer.echo(f"  {sum(max(i.points, 0) for i in rubric.items):>4}  possible")


@tasks_app.command("sample")
@friendly
def sample(
    refs: list[str] = typer.Argument(..., help="Families (acme/product-price) or instance ids."),
    seeds: str = typer.Option("0-9", "--seeds", help="Seeds, e.g. 0-99 or 3,7."),
    levels: str | None = typer.Option(None, "--levels", help="Levels, e.g. 0 or 0-1 (default: all)."),
    split: str | None = typer.Option(None, "--split", help="Keep only train, val or test instances."),
) -> None:
    """Write instances as task folders under .egym/instances/tasks (give that folder to any command)."""
    from gym.families import resolve

    tasks = [t for t in resolve(list(refs), seeds=seeds, levels=levels) if split is None or t.split == split]
    for task in tasks:
        typer.echo(f"{task.key}\t{task.split}\t{task.path}")
    typer.echo(f"{len(tasks)} instance(s)")


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
