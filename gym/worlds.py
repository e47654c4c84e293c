"""Worlds by name, whatever the working directory: installed packages' `egym.worlds` entry points,
and `tasks/<world>/world.yaml` under the working directory (a checkout, or a folder of your own).

A world is the folder holding its world.yaml, initial state, families and hand-written tasks; its
rubrics are `rubrics/<world>/` beside the `tasks/` folder that holds it (grader.loader.world_rubrics).
A package registers each of its worlds by that folder:

    [project.entry-points."egym.worlds"]
    northwind = "egym_world_northwind:WORLD"   # WORLD = Path(__file__).parent / "tasks" / "northwind"

The entry point's name is the world's name and its folder's. One name, one folder: a name two
packages define, or a package and ./tasks define for two different folders, is an error naming
both; the same folder found twice (an editable install used in its checkout) is one world. An entry
point whose object is None carries no world in this install (egym's own acme, from a wheel).
"""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import TaskError
from core.plugins import Registry
from core.validation import closest

GROUP = "egym.worlds"
HERE = Path("tasks")  # the working directory's worlds

# This repository's acme world, registered by enterprise-gym's own entry point (pyproject.toml). It is
# data of the checkout: a wheel holds no tasks/ folder, so there the entry point carries no world.
_CHECKOUT_ACME = Path(__file__).resolve().parents[1] / "tasks" / "acme"
ACME = _CHECKOUT_ACME if (_CHECKOUT_ACME / "world.yaml").is_file() else None


def _installed() -> Registry:
    """Entry points read anew on each call (about 15 ms), so a long-running dashboard sees a world
    installed after it started."""
    return Registry("world", GROUP, error=TaskError)


def _installed_dir(registry: Registry, name: str) -> Path | None:
    """The folder an installed world's entry point names; TaskError naming the entry point when it is broken."""
    where = f"world '{name}' (entry point {GROUP} {name} = {registry.target(name)})"
    try:
        folder = registry.load(name)
    except TaskError:
        raise
    except Exception as exc:  # noqa: BLE001 - a package that fails to import is one line naming its world
        raise TaskError(f"{where}: failed to import: {type(exc).__name__}: {exc}") from None
    if folder is None:
        return None
    if not isinstance(folder, str | os.PathLike):
        raise TaskError(f"{where}: is a {type(folder).__name__}, not the world's folder (a pathlib.Path)")
    folder = Path(folder).resolve()
    if not (folder / "world.yaml").is_file():
        raise TaskError(f"{where}: {folder} holds no world.yaml")
    if folder.name != name:
        raise TaskError(f"{where}: names the folder {folder}; a world's folder has the world's name")
    return folder


def worlds_in(folder: Path) -> dict[str, Path]:
    """The worlds of one folder of worlds (`<folder>/<world>/world.yaml`), by name."""
    return {p.parent.name: p.parent.resolve() for p in sorted(folder.glob("*/world.yaml"))}


def _one(name: str, here: dict[str, Path], registry: Registry) -> Path | None:
    local = here.get(name)
    installed = _installed_dir(registry, name) if name in registry.names() else None
    if local is not None and installed is not None and local != installed:
        raise TaskError(
            f"world '{name}' is defined twice: {HERE / name} here and {installed} by entry point "
            f"{GROUP} {name} = {registry.target(name)}; rename or remove one"
        )
    return local or installed


def world_dirs() -> dict[str, Path]:
    """Every world's folder by name, sorted; TaskError when a name is defined twice or an entry point is broken."""
    here, registry = worlds_in(HERE), _installed()
    found = {name: _one(name, here, registry) for name in sorted({*here, *registry.names()})}
    return {name: folder for name, folder in found.items() if folder is not None}


def world_dir(ref: str | Path) -> Path:
    """A world's folder: `ref` itself when it holds world.yaml, else the world of that name; TaskError
    naming the closest world when there is none."""
    if (Path(ref) / "world.yaml").is_file():
        return Path(ref).resolve()
    here, registry = worlds_in(HERE), _installed()
    folder = _one(str(ref), here, registry)
    if folder is not None:
        return folder
    if str(ref) in registry.names():
        raise TaskError(f"world '{ref}': its entry point {registry.target(str(ref))} carries no world here")
    known = {*here, *registry.names()}
    hint = closest(str(ref), known) if known else "; no package installs a world and there is no ./tasks"
    raise TaskError(f"no world '{ref}'{hint}")
