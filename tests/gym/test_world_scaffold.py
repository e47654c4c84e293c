"""`egym new world`: a world as a package of its own that lints and validates as it is, installed
with pip and used from another directory by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import TaskError
from grader.checks import resolve as resolve_check
from gym.lint import lint
from gym.world_scaffold import write_world


def egym(*args: str, cwd: Path, site: Path | None = None) -> subprocess.CompletedProcess:
    """The CLI in a process of its own, as a user runs it (with `site` on its PYTHONPATH)."""
    env = {**os.environ, **({"PYTHONPATH": str(site)} if site else {})}
    return subprocess.run(
        [sys.executable, "-m", "gym.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )


def test_the_scaffold_is_a_package_whose_world_lints(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = write_world("northwind", tmp_path)
    package = root / "egym_world_northwind"
    assert (
        '[project.entry-points."egym.worlds"]\nnorthwind = "egym_world_northwind:WORLD"'
        in (root / "pyproject.toml").read_text()
    )
    world = package / "tasks" / "northwind"
    assert (world / "families" / "stock_check.py").is_file() and (package / "rubrics" / "northwind").is_dir()
    report = lint([world, package / "rubrics"])
    assert not report.problems and not report.warnings, [
        *map(str, report.problems),
        *map(str, report.warnings),
    ]
    assert report.tasks == 3  # the family's seeds 0-2

    # The world's own checks, named from an instance's rubric (under .egym, far from the package) as acme's are.
    (package / "rubrics" / "northwind" / "checks.py").write_text("def always(ctx):\n    return True\n")
    instance_rubric = tmp_path / ".egym" / "instances" / "rubrics" / "northwind" / "stock-check-l0-s0.json"
    assert instance_rubric.is_file()
    assert resolve_check("rubrics.northwind.checks:always", near=instance_rubric)(None) is True


def test_the_scaffold_refuses_a_bad_name_a_known_world_and_an_existing_folder(tmp_path):
    with pytest.raises(TaskError, match="a world name is lowercase words joined by dashes"):
        write_world("North_Wind", tmp_path)
    with pytest.raises(TaskError, match=r"^world 'acme' exists already \("):
        write_world("acme", tmp_path)
    (tmp_path / "taken").mkdir()
    with pytest.raises(TaskError, match="taken already exists"):
        write_world("taken", tmp_path)


@pytest.mark.docker
@pytest.mark.slow
def test_a_world_package_installed_elsewhere_lists_lints_and_validates_by_name(tmp_path, docker_image):
    made = egym("new", "world", "northwind", "--dir", str(tmp_path), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target"]
    installed = subprocess.run([*pip, str(site), str(tmp_path / "northwind")], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"  # no tasks/ here, and the package's source is not on the path
    elsewhere.mkdir()

    listed = egym("tasks", "list", "--json", cwd=elsewhere, site=site)
    assert listed.returncode == 0, listed.stderr
    entries = {(e["world"], e["name"]): e for e in json.loads(listed.stdout)}
    assert entries["northwind", "stock-check"]["kind"] == "family"
    assert ("acme", "manager-question") in entries  # the checkout's world, from outside the checkout

    linted = egym("lint", "northwind/stock-check", cwd=elsewhere, site=site)
    assert linted.returncode == 0 and "ok: 3 task(s)" in linted.stdout, linted.stdout + linted.stderr

    validated = egym(
        "validate",
        "northwind/stock-check",
        "--levels",
        "0",
        "--seeds",
        "0",
        "--json",
        cwd=elsewhere,
        site=site,
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr[-3000:]
    (report,) = json.loads(validated.stdout)
    assert report["task"] == "northwind/stock-check-l0-s0" and report["ok"], report
    instance = elsewhere / ".egym" / "instances" / "tasks" / "northwind" / "world.yaml"
    assert str(site / "egym_world_northwind" / "tasks" / "northwind") in instance.read_text()

    for ref in ("acme/manager-question", "acme/product-price-l0-s0"):
        shown = egym("tasks", "show", ref, cwd=elsewhere, site=site)
        assert shown.returncode == 0 and shown.stdout.startswith(f"{ref}  split "), shown.stderr
