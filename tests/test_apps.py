"""Apps are discovered from their folders (mcp_wrappers/<name>/app.toml), never listed by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gym.tasks import Task
from mcp_wrappers.apps import App, apps

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "gym", "grader", "trainer", "mcp_wrappers")
# The grader reads each app's state with code of its own (docs/architecture.md): the probe's read
# methods and the damage kinds name the apps whose state they read.
PER_APP_READERS = {"grader/probe.py", "grader/timebox.py", "grader/damage.py"}


def test_every_app_folder_has_a_valid_descriptor_and_a_server_module():
    found = apps()
    assert {"db", "chat", "office"} <= set(found)
    for name, spec in found.items():
        assert spec.folder == ROOT / "mcp_wrappers" / name
        server = ROOT / Path(*spec.server.split("."))
        assert (server / "__main__.py").is_file(), f"{name}: no MCP server at {spec.server}"
        for module in spec.checks:
            assert (ROOT / "grader" / "checks" / f"{module}.py").is_file(), f"{name}: no checks {module}"
        words = set(re.findall(r"\w+", spec.prompt))
        assert set(re.findall(r"\w+", spec.prompt_compact)) <= words, f"{name}: compact adds words"


def _names() -> set[str]:
    return set(apps()) | {spec.server for spec in apps().values()}


def _listed(node: ast.AST) -> set[str]:
    """The strings a literal collection (or a Literal[...]) holds, keys of a dict included."""
    if isinstance(node, ast.Dict):
        elements = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        elements = node.elts
    elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal":
        inner = node.slice
        elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    else:
        return set()
    return {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def test_no_module_lists_the_apps_by_hand():
    names = _names()
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if str(path.relative_to(ROOT)) in PER_APP_READERS:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                listed = _listed(node) & names
                if len(listed) >= 2:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(listed)}")
    assert not offenders, "apps listed by hand (read mcp_wrappers.apps instead):\n" + "\n".join(offenders)


def test_the_guard_sees_a_hand_written_list():
    tree = ast.parse('SERVERS = {"chat": 1, "db": 2}\nApp = Literal["db", "office"]')
    assert {n.lineno for n in ast.walk(tree) if len(_listed(n) & _names()) >= 2} == {1, 2}


def test_a_task_names_apps_by_their_one_name():
    base = {"id": "t", "title": "T", "world": "acme", "prompt": "Do it."}
    assert Task.model_validate({**base, "apps": list(apps())}).apps == list(apps())
    with pytest.raises(ValueError, match="'postgres' is now called 'db'"):
        Task.model_validate({**base, "apps": ["postgres"]})
    with pytest.raises(ValueError, match="no app 'mall'"):
        Task.model_validate({**base, "apps": ["mall"]})


def test_a_descriptor_whose_name_is_not_its_folder_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "calendar"
    folder.mkdir()
    (folder / "app.toml").write_text(
        'name = "agenda"\ntitle = "Calendar"\nserver = "mcp_wrappers.calendar"\nprompt = "p"\nprompt_compact = "p"\n'
    )
    monkeypatch.setattr("mcp_wrappers.apps.HERE", tmp_path)
    apps.cache_clear()
    try:
        with pytest.raises(ValueError, match="is not its folder's name"):
            apps()
    finally:
        monkeypatch.undo()
        apps.cache_clear()
    assert isinstance(apps()["db"], App)


IMAGE = ROOT / "images" / "world"
SCRIPTS = ("setup", "start", "stop", "baseline")


def _code_lines(path: Path) -> str:
    """A script's lines without its comments."""
    return "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in path.read_text().splitlines())


def test_the_image_takes_each_apps_part_from_its_folder():
    """The shared image names no app's packages and its init scripts no app but the database."""
    dockerfile = _code_lines(IMAGE / "Dockerfile")
    for name, spec in apps().items():
        image = spec.folder / "image"
        for script in SCRIPTS:
            if (image / script).exists():
                assert (image / script).stat().st_mode & 0o111, f"{name}: image/{script} is not executable"
        packages = image / "packages"
        for package in packages.read_text().split() if packages.exists() else []:
            assert package not in dockerfile, f"images/world/Dockerfile installs {name}'s {package}"
    # egym-init starts the database first in every sandbox (other apps keep their data in it):
    # the one app it names. The rest come from EGYM_APPS and the apps' folders.
    for script in ("egym-init", "read-state"):
        code = _code_lines(IMAGE / "bin" / script)
        named = {name for name in apps() if re.search(rf"\b{name}\b", code)}
        assert named <= {"db"}, f"images/world/bin/{script} names apps {sorted(named)}"
