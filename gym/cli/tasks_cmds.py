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
    """Every family (its levels, split and distinct instances) and every hand-written task, per world."""
    from rich.console import Console
    from rich.table import Table

    from gym.families import COUNT_SEEDS, families, instance_counts
    from gym.tasks import discover_tasks

    console = Console()
    table = Table(title="tasks", title_justify="left")
    for column in ("world", "family / task", "levels", "instances", "split", "title"):
        table.add_column(column, justify="right" if column == "instances" else "left")
    n_families = n_instances = 0
    for world in _worlds(worlds):
        with console.status(f"counting the instances of {world.name}'s families") as status:
            counts = instance_counts(world, progress=lambda name: status.update(f"counted {name}"))
        for name, family in families(world).items():
            per_level = counts.get(name, {})
            table.add_row(
                world.name,
                name,
                ",".join(map(str, family.levels)),
                " + ".join(str(per_level.get(level, 0)) for level in family.levels),
                f"{family.split} (by seed)" if family.split == "train" else family.split,
                family.title,
            )
            n_families += 1
            n_instances += sum(per_level.values())
        for task in discover_tasks(world):
            table.add_row(world.name, task.id, "-", "1", task.split, task.title)
    console.print(table)
    typer.echo(
        f"{n_families} families, {n_instances} distinct instances over seeds 0-{COUNT_SEEDS - 1} "
        "(ids: <family>-l<level>-s<seed>)"
    )


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


new_app = typer.Typer(
    help="Scaffolds: a new task family that lints and validates, to edit.", no_args_is_help=True
)


@new_app.command("family")
@friendly
def new_family(
    name: str = typer.Argument(..., help="The family's name, e.g. order-status (a file order_status.py)."),
    world: Path = typer.Option(Path("tasks/acme"), "--world", help="The world folder it belongs to."),
) -> None:
    """Write tasks/<world>/families/<name>.py: a working one-level family to turn into real work."""
    from gym.families import write_scaffold

    path = write_scaffold(world, name)
    typer.echo(f"wrote {path}")
    typer.echo(
        f"next: egym tasks show {world.name}/{name}-l0-s0, then egym validate '{world.name}/{name}@0-3'"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
    app.add_typer(new_app, name="new")
