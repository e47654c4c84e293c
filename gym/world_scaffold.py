"""What `egym new world NAME` writes: a world as a Python package of its own, which lints and
validates as it is.

    <dir>/<name>/pyproject.toml                            the package, its egym.worlds entry point
    <dir>/<name>/egym_world_<name>/__init__.py             WORLD: the world's folder (gym.worlds)
    <dir>/<name>/egym_world_<name>/tasks/<name>/world.yaml the company, the agent, the apps
    .../tasks/<name>/initial_state/01-company.sql          the initial state, run in database `company`
    .../tasks/<name>/families/<family>.py                  one family: the scaffold of `egym new family`
    .../rubrics/<name>/                                    hand-written tasks' rubrics (<task-id>.json)

`tasks/<world>` and `rubrics/<world>` under one root is the layout of this repository, so a task's
rubric is found the same way in a package and in a checkout (grader.loader.rubric_for_task).
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from core.errors import TaskError
from gym.authoring import write_scaffold
from gym.worlds import world_dir

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")

PYPROJECT = Template("""\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "egym-world-$name"
version = "0.1.0"
description = "The $company world for enterprise-gym: its initial state, task families, tasks and rubrics"
requires-python = ">=3.11"
dependencies = ["enterprise-gym"]

# The world by name: `egym tasks list` shows it and `$name/<family>` refs work from any directory.
[project.entry-points."egym.worlds"]
$name = "$package:WORLD"

# Every folder of the package (tasks/..., rubrics/...) with every file in it: the world is its data.
[tool.setuptools.packages.find]
include = ["$package*"]

[tool.setuptools.package-data]
"*" = ["*"]
""")

INIT = Template('''\
"""The $company world for enterprise-gym, registered by the `egym.worlds` entry point in pyproject.toml."""

from pathlib import Path

WORLD = Path(__file__).parent / "tasks" / "$name"  # world.yaml; its rubrics are in rubrics/$name
''')

WORLD_YAML = Template("""\
name: $name
company: $company
description: >-
  $company is a small company. Business data lives in the PostgreSQL database
  `company` (psql connects you as your own role).
date: 2025-01-06  # today inside the world
agent:
  name: Alex Morgan
  title: Operations Analyst
  email: alex.morgan@$name.example
  chat_username: alex.morgan
  db_role: agent
apps: [db]  # also: chat, office (docs/authoring.md)
initial_state:
  sql:
    - initial_state/01-company.sql
""")

INITIAL_SQL = Template("""\
-- $company's initial state: run as superuser in the database `company` when the world's image is
-- built. The agent connects as role `agent` and may do only what is granted to it here.
CREATE TABLE employees (
  id integer PRIMARY KEY,
  name text NOT NULL,
  title text NOT NULL,
  email text NOT NULL
);
INSERT INTO employees VALUES
  (1, 'Alex Morgan', 'Operations Analyst', 'alex.morgan@$name.example'),
  (2, 'Sam Rivera', 'Head of Operations', 'sam.rivera@$name.example');
-- The agent may correct a job title and nothing else. A change a task does not allow is damage:
-- `egym validate` runs a cheat that changes whatever it may, and it must lose points.
GRANT SELECT, UPDATE (title) ON employees TO agent;
""")

GITIGNORE = "__pycache__/\n*.egg-info/\nbuild/\n.egym/\n"


def write_world(name: str, parent: Path, family: str = "stock-check") -> Path:
    """Write the world package `parent/name` with one family; returns its folder."""
    if not NAME.fullmatch(name):
        raise TaskError(f"{name!r}: a world name is lowercase words joined by dashes, e.g. northwind")
    try:
        existing = world_dir(name)
    except TaskError:
        existing = None
    if existing is not None:
        raise TaskError(f"world '{name}' exists already ({existing}); pick another name")
    root = parent / name
    if root.exists():
        raise TaskError(f"{root} already exists; pick another name or --dir")
    package = f"egym_world_{name.replace('-', '_')}"
    fields = {"name": name, "company": name.replace("-", " ").title(), "package": package}
    world = root / package / "tasks" / name
    files = {
        root / "pyproject.toml": PYPROJECT.substitute(fields),
        root / ".gitignore": GITIGNORE,
        root / package / "__init__.py": INIT.substitute(fields),
        world / "world.yaml": WORLD_YAML.substitute(fields),
        world / "initial_state" / "01-company.sql": INITIAL_SQL.substitute(fields),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / package / "rubrics" / name).mkdir(parents=True)
    write_scaffold(world, family)
    return root
