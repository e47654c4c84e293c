"""Tasks and worlds as files: `tasks/<world>/world.yaml` and `tasks/<world>/<task>/task.yaml`.

Both are strict pydantic models (`extra="forbid"`): a typo in a key is an error
naming the file and the key, not a silently ignored field.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import TaskError
from core.validation import describe_validation_error

App = Literal["postgres", "chat", "office"]
Split = Literal["train", "val", "test"]
Band = Literal["too-easy", "target", "hard", "too-hard"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Overlay(_Strict):
    """Files applied to a fresh container, paths relative to the YAML file's folder."""

    sql: list[str] = Field(
        default_factory=list, description="SQL files run as superuser in `company`, in order."
    )
    chat: list[str] = Field(
        default_factory=list, description="Chat files (users, channels, posts), YAML or JSON."
    )
    workspace: str | None = Field(None, description="A folder whose contents are copied into /workspace.")


class AgentIdentity(_Strict):
    """Who the agent is in the world."""

    name: str = Field(description="The employee's full name.")
    title: str = Field(description="Job title, e.g. 'Finance Analyst'.")
    email: str = Field(description="Work e-mail address.")
    chat_username: str = Field(description="Chat user the agent posts as.")
    db_role: str = Field(
        "agent", description="PostgreSQL role the agent connects as (peer auth as OS user agent)."
    )


class World(_Strict):
    """A company that tasks are set in, with its initial state."""

    name: str = Field(description="Folder name and id of the world, e.g. 'acme'.")
    company: str = Field(description="Company name shown to the agent.")
    description: str = Field("", description="One paragraph about the company, for the system prompt.")
    date: dt.date = Field(description="Today's date inside the world.")
    agent: AgentIdentity
    apps: list[App] = Field(
        default_factory=lambda: ["postgres"], description="Apps every task in this world may use."
    )
    initial_state: Overlay = Field(
        default_factory=Overlay, description="Files that make the world's initial state."
    )
    path: Path = Field(Path("."), exclude=True, description="Folder holding world.yaml (set by the loader).")


# Bounds a person would accept; anything outside is a typo (1e29 turns, 1e-6 seconds).
MAX_TURNS = 1000
TIME_LIMIT_S = (1, 86_400)
TOOL_TIMEOUT_S = (0.1, 3600)


class Limits(_Strict):
    max_turns: int = Field(
        30, ge=1, le=MAX_TURNS, description="Assistant turns before the episode is truncated."
    )
    time_limit_s: float = Field(
        600, ge=TIME_LIMIT_S[0], le=TIME_LIMIT_S[1], description="Wall-clock seconds before truncation."
    )
    tool_timeout_s: float = Field(
        60, ge=TOOL_TIMEOUT_S[0], le=TOOL_TIMEOUT_S[1], description="Per tool call timeout."
    )


class BandEvidence(_Strict):
    """What a band was measured from: written next to it by `egym calibrate`."""

    pass_rate: float = Field(ge=0, le=1)
    interval: tuple[float, float] = Field(description="Wilson 95% interval of the pass rate.")
    samples: int = Field(ge=1, description="Complete grades counted.")
    policy: str = ""


class Task(_Strict):
    """One thing an employee is asked to do, with its reference solution."""

    id: str = Field(description="Unique within the world; equals the folder name.")
    title: str = Field(min_length=1)
    world: str = Field(description="Name of the world folder this task runs in.")
    prompt: str = Field(
        min_length=1, description="What the employee is asked to do (the first user message)."
    )
    apps: list[App] = Field(
        default_factory=lambda: ["postgres"], description="Apps started in the container."
    )
    initial_state: Overlay = Field(
        default_factory=Overlay, description="Task-specific overlay on the world's initial state."
    )
    limits: Limits = Field(default_factory=Limits)
    split: Split = "train"
    tags: list[str] = Field(default_factory=list)
    band: Band | None = Field(None, description="Difficulty band, written by `egym calibrate`.")
    calibration: BandEvidence | None = Field(None, description="The measurement behind `band`.")
    pass_threshold: float = Field(0.8, ge=0, le=1, description="Normalized score counted as a pass.")
    solution: str = Field(
        "solution/actions.yaml", description="Reference solution replayed by the oracle policy."
    )
    system_prompt: str | None = Field(None, description="Overrides the harness's default system prompt.")
    path: Path = Field(Path("."), exclude=True, description="Folder holding task.yaml (set by the loader).")

    @property
    def key(self) -> str:
        """Globally unique name: `world/task-id`."""
        return f"{self.world}/{self.id}"


def _read_yaml(path: Path) -> dict:
    if not path.is_file():
        raise TaskError(f"{path}: file not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a mapping at the top level")
    return data


def load_world(folder: str | Path) -> World:
    folder = Path(folder)
    path = folder / "world.yaml"
    try:
        world = World.model_validate({**_read_yaml(path), "path": folder})
    except ValidationError as exc:
        raise TaskError(f"{path}: {describe_validation_error(exc, model=World)}") from None
    return world


def load_task(folder: str | Path) -> Task:
    folder = Path(folder)
    path = folder / "task.yaml"
    try:
        task = Task.model_validate({**_read_yaml(path), "path": folder})
    except ValidationError as exc:
        raise TaskError(f"{path}: {describe_validation_error(exc, model=Task)}") from None
    if task.id != folder.name:
        raise TaskError(f"{path}: id: '{task.id}' must equal the folder name '{folder.name}'")
    return task


def world_of(task: Task) -> World:
    """The world a task runs in (the task folder's parent holds world.yaml)."""
    world = load_world(task.path.parent)
    if world.name != task.world:
        raise TaskError(
            f"{task.path / 'task.yaml'}: world: '{task.world}' but the folder holds world '{world.name}'"
        )
    return world


def discover_tasks(*paths: str | Path) -> list[Task]:
    """Every task under the given paths (a task folder, a world folder, or a tree of them), sorted by key."""
    found: dict[str, Task] = {}
    for root in map(Path, paths or ("tasks",)):
        if not root.exists():
            raise TaskError(f"{root}: no such task folder")
        files = [root / "task.yaml"] if (root / "task.yaml").is_file() else sorted(root.rglob("task.yaml"))
        for file in files:
            task = load_task(file.parent)
            found[task.key] = task
    if not found:
        raise TaskError(f"no task.yaml under {', '.join(map(str, paths))}")
    return [found[k] for k in sorted(found)]


def save_band(task: Task, band: Band, evidence: BandEvidence) -> None:
    """Write a calibrated band and its evidence back into task.yaml, leaving the rest of the file as it is."""
    path = task.path / "task.yaml"
    lines = path.read_text().splitlines()
    kept = [line for line in lines if not line.startswith(("band:", "calibration:"))]
    low, high = evidence.interval
    kept.append(f"band: {band}")
    kept.append(
        f"calibration: {{pass_rate: {evidence.pass_rate:.3f}, interval: [{low:.3f}, {high:.3f}], "
        f"samples: {evidence.samples}, policy: {json.dumps(evidence.policy)}}}"
    )
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text("\n".join(kept) + "\n")
    tmp.replace(path)
