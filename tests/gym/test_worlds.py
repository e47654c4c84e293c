"""Worlds by name (gym/worlds.py): installed distributions' `egym.worlds` entry points and ./tasks,
one folder per name, a broken entry point reported by its name.

The distributions here are real ones as importlib.metadata reads them: a `*.dist-info` folder with
METADATA and entry_points.txt on sys.path, as pip writes it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from core.errors import TaskError
from gym.task_refs import resolve
from gym.worlds import ACME, world_dir, world_dirs
from tests.gym.batch_fakes import write_stub_tasks

ROOT = Path(__file__).resolve().parents[2]


def install(site: Path, dist: str, module: str, source: str, worlds: dict[str, str]) -> None:
    """A distribution `dist` with one module and `egym.worlds` entry points, importable from `site`."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in worlds.items())
    (info / "entry_points.txt").write_text(f"[egym.worlds]\n{lines}")
    importlib.invalidate_caches()  # the import system's listing of `site` may predate the new files


def world_source(folder: Path) -> str:
    return f"from pathlib import Path\nWORLD = Path({str(folder)!r})\n"


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A working directory outside the checkout, with sys.path (and so the installed distributions)
    restored after the test."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return tmp_path


def test_a_package_and_the_working_directory_both_give_worlds(elsewhere):
    packaged = write_stub_tasks(elsewhere / "pkg" / "tasks", ["ask"], world="north")
    install(
        elsewhere / "site",
        "egym-world-north",
        "north_world_a",
        world_source(packaged),
        {"north": "north_world_a:WORLD"},
    )
    write_stub_tasks(elsewhere / "tasks", ["hello"], world="local")

    found = world_dirs()
    assert found == {
        "acme": ACME,
        "local": (elsewhere / "tasks" / "local").resolve(),
        "north": packaged.resolve(),
    }
    assert world_dir("north") == packaged.resolve()
    # Refs name the world wherever it lives: a hand-written task of each, and acme's from outside the checkout.
    keys = [t.key for t in resolve(["north/ask", "local/hello", "acme/manager-question"])]
    assert keys == ["acme/manager-question", "local/hello", "north/ask"]
    assert [t.key for t in resolve(["north"])] == ["north/ask"]


def test_acme_is_the_checkouts_own_and_one_world_when_found_twice(monkeypatch):
    monkeypatch.chdir(ROOT)  # ./tasks/acme and the entry point name the same folder
    assert ACME == ROOT / "tasks" / "acme"
    assert world_dirs()["acme"] == ACME


def test_a_name_defined_twice_is_one_line_naming_both(elsewhere):
    one = write_stub_tasks(elsewhere / "one" / "tasks", ["a"], world="north")
    two = write_stub_tasks(elsewhere / "two" / "tasks", ["b"], world="north")
    install(elsewhere / "site", "world-one", "north_one", world_source(one), {"north": "north_one:WORLD"})
    install(elsewhere / "site", "world-two", "north_two", world_source(two), {"north": "north_two:WORLD"})
    with pytest.raises(TaskError) as caught:
        world_dir("north")
    assert str(caught.value) == (
        "world 'north' is defined twice by installed packages (north_one:WORLD and north_two:WORLD): uninstall one"
    )
    with pytest.raises(TaskError, match="world 'north' is defined twice"):
        world_dirs()

    write_stub_tasks(
        elsewhere / "tasks", ["c"], world="acme"
    )  # a folder of its own named like the installed acme
    with pytest.raises(TaskError) as caught:
        world_dir("acme")
    assert str(caught.value) == (
        f"world 'acme' is defined twice: tasks/acme here and {ACME} by entry point egym.worlds acme = "
        "gym.worlds:ACME; rename or remove one"
    )


WHERE = "world 'broken' (entry point egym.worlds broken = {module}:WORLD)"


@pytest.mark.parametrize(
    "case, source, message",
    [
        (
            "missing-module",
            None,
            "world 'broken' could not be imported: No module named 'broken_missing_module'",
        ),
        ("missing-attribute", "X = 1\n", "world 'broken': {module} has no attribute 'WORLD'"),
        (
            "raises",
            "raise RuntimeError('no database')\n",
            WHERE + ": failed to import: RuntimeError: no database",
        ),
        ("not-a-path", "WORLD = 3\n", WHERE + ": is a int, not the world's folder (a pathlib.Path)"),
        (
            "no-world-yaml",
            "from pathlib import Path\nWORLD = Path('/nonexistent/broken')\n",
            WHERE + ": /nonexistent/broken holds no world.yaml",
        ),
    ],
)
def test_a_broken_entry_point_is_reported_by_name_and_the_others_still_resolve(
    elsewhere, case, source, message
):
    module = f"broken_{case.replace('-', '_')}"
    install(elsewhere / "site", "egym-world-broken", module, source or "", {"broken": f"{module}:WORLD"})
    if source is None:
        (elsewhere / "site" / f"{module}.py").unlink()
    with pytest.raises(TaskError) as caught:
        world_dirs()
    assert str(caught.value) == message.format(module=module)
    with pytest.raises(TaskError, match="^broken/x: no such task folder, and world 'broken'"):
        resolve(["broken/x"])
    assert world_dir("acme") == ACME


def test_an_unknown_world_names_the_closest(elsewhere):
    with pytest.raises(
        TaskError, match=r"^acm/x: no such task folder, and no world 'acm'; did you mean 'acme'\?$"
    ):
        resolve(["acm/x"])
