"""`egym tasks`: the task library: hand-written tasks, families and their instances."""

from __future__ import annotations

from pathlib import Path

import typer

from gym.cli.errors import friendly, stderr
from gym.cli.options import JSON, LEVELS, SEEDS, SPLIT, Split
from gym.cli.output import emit, emit_json

tasks_app = typer.Typer(
    help="Tasks and task families: list, show one, sample instances.", no_args_is_help=True
)
WORLDS = typer.Argument(
    None, help="Worlds by name (acme) or folder (default: every world installed or in ./tasks)."
)


def _worlds(worlds: list[str] | None) -> list[Path]:
    from gym.worlds import world_dir, world_dirs

    return [world_dir(w) for w in worlds] if worlds else list(world_dirs().values())


@tasks_app.command("list")
@friendly
def list_(worlds: list[str] = WORLDS, as_json: bool = JSON) -> None:
    """Every family (its levels, split and distinct instances) and every hand-written task, per world."""
    from rich.table import Table

    from core.errors import TaskError
    from gym.families import COUNT_SEEDS

    folders = _worlds(worlds)
    entries = _library(folders)
    if not entries:
        where = ", ".join(f"world {f.name}" for f in folders) or "any world (none is installed or in ./tasks)"
        raise TaskError(
            f"no tasks here: no family or hand-written task in {where}; `egym new world NAME` starts one"
        )
    if as_json:
        emit_json(entries)
        return
    table = Table(title="tasks", title_justify="left")
    for column in ("world", "family / task", "levels", "instances", "split", "title"):
        table.add_column(column, justify="right" if column == "instances" else "left")
    for e in entries:
        family = e["kind"] == "family"
        table.add_row(
            e["world"],
            e["name"],
            ",".join(map(str, e["levels"])) if family else "-",
            " + ".join(map(str, e["instances"].values())) if family else "1",
            f"{e['split']} (by seed)" if family and e["split"] == "train" else e["split"],
            e["title"],
        )
    emit(table)
    families = [e for e in entries if e["kind"] == "family"]
    typer.echo(
        f"{len(families)} families, {sum(sum(e['instances'].values()) for e in families)} distinct instances "
        f"over seeds 0-{COUNT_SEEDS - 1} (ids: <family>-l<level>-s<seed>)"
    )


def _library(worlds: list[Path]) -> list[dict]:
    """Each world's families (distinct instances per level over the counted seeds) and hand-written tasks."""
    from gym.families import families, instance_counts
    from gym.tasks import load_task

    entries: list[dict] = []
    for world in worlds:
        with stderr.status(f"counting the instances of {world.name}'s families") as status:
            counts = instance_counts(world, progress=lambda name: status.update(f"counted {name}"))
        for name, family in families(world).items():
            per_level = counts.get(name, {})
            entries.append(
                {
                    "world": world.name,
                    "name": name,
                    "kind": "family",
                    "levels": family.levels,
                    "instances": {level: per_level.get(level, 0) for level in family.levels},
                    "split": family.split,
                    "title": family.title,
                }
            )
        for task in (load_task(file.parent) for file in sorted(world.glob("*/task.yaml"))):
            entries.append(
                {
                    "world": world.name,
                    "name": task.id,
                    "kind": "task",
                    "levels": None,
                    "instances": None,
                    "split": task.split,
                    "title": task.title,
                }
            )
    return entries


@tasks_app.command("show")
@friendly
def show(
    ref: str = typer.Argument(..., help="An instance id (acme/product-price-l0-s3) or a task folder."),
) -> None:
    """The task as the agent gets it, its split, and its rubric's items and points."""
    from grader.loader import load_rubric, rubric_for_task
    from gym.task_refs import resolve

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
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: Split | None = SPLIT,
) -> None:
    """Write instances as task folders under .egym/instances/tasks (give that folder to any command)."""
    from gym.task_refs import resolve

    tasks = [t for t in resolve(list(refs), seeds=seeds, levels=levels) if split is None or t.split == split]
    for task in tasks:
        typer.echo(f"{task.key}\t{task.split}\t{task.path}")
    typer.echo(f"{len(tasks)} instance(s)")


new_app = typer.Typer(
    help="Scaffolds that lint and validate as they are, to edit: a task family, a world package.",
    no_args_is_help=True,
)


@new_app.command("family")
@friendly
def new_family(
    name: str = typer.Argument(..., help="The family's name, e.g. order-status (a file order_status.py)."),
    world: str = typer.Option("acme", "--world", help="The world it belongs to, by name or folder."),
) -> None:
    """Write <world>/families/<name>.py: a working one-level family to turn into real work
    (refused when a hand-written task of the world has the name)."""
    from gym.authoring import write_scaffold
    from gym.worlds import world_dir

    folder = world_dir(world)
    path = write_scaffold(folder, name)
    typer.echo(f"wrote {path}")
    typer.echo(
        f"next: egym tasks show {folder.name}/{name}-l0-s0, then egym validate '{folder.name}/{name}@0-3'"
    )


@new_app.command("world")
@friendly
def new_world(
    name: str = typer.Argument(..., help="The world's name, e.g. northwind."),
    folder: Path = typer.Option(Path("."), "--dir", help="Where the package's folder <name>/ is written."),
) -> None:
    """Write a world as a Python package of its own: pyproject.toml with its egym.worlds entry point,
    world.yaml, a small initial state, one family and the rubrics folder."""
    from gym.world_scaffold import write_world

    root = write_world(name, folder)
    typer.echo(f"wrote {root}")
    typer.echo(
        f"next: pip install -e {root}, then egym lint {name}/stock-check and "
        f"egym validate {name}/stock-check --levels 0 --seeds 0"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
    app.add_typer(new_app, name="new")
