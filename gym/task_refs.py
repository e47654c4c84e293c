"""What a task reference names: a world, a hand-written task, a family or one instance of it.

`resolve` turns the refs a command is given (`acme`, `acme/q1-close`, `acme/product-price`,
`acme/product-price-l0-s3`, `acme/product-price@0-199`, a folder or a family file) into tasks,
materialising family instances (gym.families) as it goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import TaskError
from gym import worlds
from gym.families import (
    DEFAULT_SEEDS,
    INSTANCE_ID,
    Family,
    is_family_file,
    load_families,
    materialize,
    shown,
)
from gym.tasks import Task, discover_tasks


def _parse_levels_seeds(text: str | None, default: list[int]) -> list[int]:
    if not text:
        return default
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        try:
            out += list(range(int(low), int(high or low) + 1))
        except ValueError:
            raise TaskError(f"{text!r}: expected numbers and ranges like 0-9,12") from None
    return out


def resolve(refs: list[str | Path], *, seeds: str | None = None, levels: str | None = None) -> list[Task]:
    """Tasks from task folders, worlds (`acme`), hand-written tasks (`acme/q1-close`), families
    (`tasks/acme/families/x.py` or `acme/x`) and instance ids (`acme/x-l0-s3`).

    A family gives its instances at `levels` (default: all) and `seeds` (default 0-9;
    `acme/x@0-199` gives a family its own).
    """
    tasks: dict[str, Task] = {}
    for ref in map(str, refs):
        selected = select_family(ref, seeds=seeds, levels=levels)
        found = (
            discover_tasks(task_folder(ref))
            if selected is None
            else [materialize(selected.family, level, seed) for level, seed in selected.instances]
        )
        tasks |= {task.key: task for task in found}
    if not tasks:
        raise TaskError(f"no tasks in {', '.join(map(str, refs))}")
    return [tasks[k] for k in sorted(tasks)]


@dataclass(frozen=True)
class Selection:
    """A family and the (level, seed) pairs a ref picks of it."""

    family: Family
    instances: list[tuple[int, int]]


def select_family(
    ref: str, *, seeds: str | None = None, levels: str | None = None, default_seeds: int = DEFAULT_SEEDS
) -> Selection | None:
    """What a family ref picks: `tasks/acme/families/x.py` or `acme/x` its `levels` (default: all) at
    `seeds` (default 0..default_seeds-1; `acme/x@0-199` its own), `acme/x-l0-s3` that instance.

    A world is found by name (gym.worlds) whatever the working directory. None for what is no
    family: a file or folder, a world (`acme`) or a hand-written task (`acme/q1-close`), which
    `task_folder` locates; TaskError for a ref that names nothing, or a family that fails to load.
    """
    ref, _, own_seeds = ref.partition("@")  # acme/product-price@0-199
    path = Path(ref)
    if path.suffix == ".py" and path.parent.name == "families":
        return _all_instances(_family_file(path), own_seeds or seeds, levels, default_seeds)
    if path.exists():
        return None
    world, _, name = ref.partition("/")
    if not world:
        raise TaskError(f"{ref}: no such task folder, family or instance")
    try:
        folder = worlds.world_dir(world)
    except TaskError as exc:
        raise TaskError(f"{ref}: no such task folder, and {exc}") from None
    if not name:
        return None
    known, broken = load_families(folder)
    match = INSTANCE_ID.match(name)
    if match and match["family"] in known.keys() | broken.keys():
        family = _named(folder, match["family"])
        return Selection(family, [(int(match["level"]), int(match["seed"]))])
    if name in known.keys() | broken.keys():
        return _all_instances(_named(folder, name), own_seeds or seeds, levels, default_seeds)
    if (folder / name / "task.yaml").is_file():
        return None
    from core.validation import closest

    tasks = [file.parent.name for file in folder.glob("*/task.yaml")]
    raise TaskError(
        f"{ref}: no family, instance or task {name!r} in {shown(folder)}{closest(name, [*known, *tasks])}"
    )


def task_folder(ref: str) -> Path:
    """The folder a ref that is no family names: the path as given when it exists, else a world by
    name (`acme`) or one of its hand-written tasks (`acme/q1-close`) wherever the world is installed."""
    ref = ref.partition("@")[0]
    if Path(ref).exists():
        return Path(ref)
    world, _, name = ref.partition("/")
    return worlds.world_dir(world) / name


def _named(world_dir: Path, name: str) -> Family:
    """A family of the world by name; its FamilyError when it fails to load."""
    known, broken = load_families(world_dir)
    if name in broken:
        raise broken[name]
    return known[name]


def _family_file(path: Path) -> Family:
    if not is_family_file(path):
        raise TaskError(
            f"{path}: not a family: `_*.py` files are the families' helpers, world.py the world's facts"
        )
    if not path.is_file():
        raise TaskError(f"{path}: no such family file")
    return _named(path.parent.parent.resolve(), path.stem.replace("_", "-"))


def _all_instances(family: Family, seeds: str | None, levels: str | None, default_seeds: int) -> Selection:
    chosen_levels = _parse_levels_seeds(levels, list(family.levels))
    chosen_seeds = _parse_levels_seeds(seeds, list(range(default_seeds)))
    return Selection(
        family, [(level, seed) for level in chosen_levels if level in family.levels for seed in chosen_seeds]
    )
