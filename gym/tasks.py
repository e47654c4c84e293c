"""Tasks and worlds as files: `tasks/<world>/world.yaml` and `tasks/<world>/<task>/task.yaml`.

Both are strict pydantic models (`extra="forbid"`): a typo in a key is an error
naming the file and the key, not a silently ignored field.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, Field, ValidationError, create_model, model_validator

from core.errors import TaskError
from core.strict import StrictModel
from core.validation import describe_validation_error
from mcp_wrappers.apps import apps

Split = Literal["train", "val", "test"]
Band = Literal["too-easy", "target", "hard", "too-hard"]


class _OverlayBase(StrictModel, allow_inf_nan=False):
    """Files applied to a fresh container, paths relative to the YAML file's folder: the workspace,
    and for each app that loads files its key (`sql`, `chat`, ...: the `overlay` of its app.toml)."""

    workspace: str | None = Field(None, description="A folder whose contents are copied into /workspace.")

    def app_files(self) -> dict[str, list[str]]:
        """Each app's overlay key and the files listed under it, in the apps' order."""
        return {key: getattr(self, key) for key in overlay_keys()}


def overlay_keys() -> list[str]:
    """The `initial_state:` keys of the apps that load files, in the apps' order."""
    return [spec.overlay for spec in apps().values() if spec.overlay]


Overlay = create_model(
    "Overlay",
    __base__=_OverlayBase,
    __doc__=_OverlayBase.__doc__,
    **{
        spec.overlay: (list[str], Field(default_factory=list, description=spec.overlay_help))
        for spec in apps().values()
        if spec.overlay
    },
)
RENAMED = {"postgres": "db"}  # app names before each app had one (mcp_wrappers/<name>/app.toml)


def _app_name(name: str) -> str:
    if name in RENAMED:
        raise ValueError(f"the app {name!r} is now called {RENAMED[name]!r}")
    if name not in apps():
        raise ValueError(f"no app {name!r} (apps: {', '.join(apps())})")
    return name


App = Annotated[str, AfterValidator(_app_name)]


class AgentIdentity(StrictModel, allow_inf_nan=False):
    """Who the agent is in the world."""

    name: str = Field(description="The employee's full name.")
    title: str = Field(description="Job title, e.g. 'Finance Analyst'.")
    email: str = Field(description="Work e-mail address.")
    chat_username: str = Field(description="Chat user the agent posts as.")
    db_role: str = Field(
        "agent", description="PostgreSQL role the agent connects as (peer auth as OS user agent)."
    )


class World(StrictModel, allow_inf_nan=False, frozen=True):
    """A company that tasks are set in, with its initial state. Frozen: load_world shares one per file."""

    name: str = Field(description="Folder name and id of the world, e.g. 'acme'.")
    company: str = Field(description="Company name shown to the agent.")
    description: str = Field("", description="One paragraph about the company, for the system prompt.")
    date: dt.date = Field(description="Today's date inside the world.")
    agent: AgentIdentity
    apps: list[App] = Field(
        default_factory=lambda: ["db"], description="Apps every task in this world may use."
    )
    initial_state: Overlay = Field(
        default_factory=Overlay, description="Files that make the world's initial state."
    )
    path: Path = Field(Path("."), exclude=True, description="Folder holding world.yaml (set by the loader).")


# Bounds a person would accept; anything outside is a typo (1e29 turns, 1e-6 seconds).
MAX_TURNS = 1000
TIME_LIMIT_S = (1, 86_400)
TOOL_TIMEOUT_S = (0.1, 3600)


class Limits(StrictModel, allow_inf_nan=False):
    max_turns: int = Field(
        30, ge=1, le=MAX_TURNS, description="Assistant turns before the episode is truncated."
    )
    time_limit_s: float = Field(
        600, ge=TIME_LIMIT_S[0], le=TIME_LIMIT_S[1], description="Wall-clock seconds before truncation."
    )
    tool_timeout_s: float = Field(
        60, ge=TOOL_TIMEOUT_S[0], le=TOOL_TIMEOUT_S[1], description="Per tool call timeout."
    )


class BandEvidence(StrictModel, allow_inf_nan=False):
    """What a band was measured from: written next to it by `egym calibrate`."""

    pass_rate: float = Field(ge=0, le=1)
    interval: tuple[float, float] = Field(description="Wilson 95% interval of the pass rate.")
    samples: int = Field(ge=1, description="Complete grades counted.")
    policy: str = Field(
        "", description="The policy and model as given to `egym calibrate`, e.g. 'hf smollm2'."
    )
    date: dt.date | None = Field(
        None, description="When it was measured (None: before bands named their model)."
    )


class ModelBand(StrictModel, allow_inf_nan=False):
    """One model's band of a task or family level, and its measurement."""

    band: Band
    calibration: BandEvidence | None = None


UNKNOWN_MODEL = "unknown"  # the key of a band written before bands named their model (gym.models.identity)


def bands_of(entry: dict) -> dict:
    """The `bands:` of a task.yaml mapping or a bands.yaml level, reading an old single `band:`
    (and its `calibration:`) as the band of model `unknown`: it still loads and shows, and no
    trained model picks it up until it is recalibrated."""
    bands = dict(entry.get("bands") or {})
    if entry.get("band") is not None:
        bands.setdefault(UNKNOWN_MODEL, {"band": entry["band"], "calibration": entry.get("calibration")})
    return bands


class CoworkerRule(StrictModel, allow_inf_nan=False):
    """What a coworker says to a message that matches: every pattern of `asks` must match it."""

    asks: list[str] = Field(
        min_length=1, description="Regexes (case-insensitive), all of which the message must match."
    )
    replies: list[str] = Field(
        min_length=1,
        description="Phrasings of the answer, facts filled in; one is picked per message, the same in every rollout.",
    )

    @model_validator(mode="after")
    def _patterns_compile(self) -> CoworkerRule:
        for pattern in self.asks:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"asks: {pattern!r} is not a regex: {exc}") from None
        return self


class Coworker(StrictModel, allow_inf_nan=False):
    """A person of the world's chat who answers the agent during an episode (gym/harness/coworkers.py).

    Their rules stay on the host: the sandbox holds only what they post.
    """

    username: str = Field(min_length=1, description="Their chat username.")
    email: str = Field(
        "", description="Their mail address: they also answer mail sent there (tasks with the mail app)."
    )
    persona: str = Field(
        "",
        description="Who they are, for a model that rewords their replies: 'the account manager for Globex'.",
    )
    rules: list[CoworkerRule] = Field(
        default_factory=list, description="Tried in order; the first that matches answers."
    )
    otherwise: list[str] = Field(
        default_factory=lambda: ["Sorry, I can't help with that one."],
        min_length=1,
        description="Phrasings for a message no rule matches.",
    )
    delay_calls: tuple[int, int] = Field(
        (0, 2), description="A reply comes this many of the agent's tool calls later (inclusive range)."
    )

    @model_validator(mode="after")
    def _delay_is_a_range(self) -> Coworker:
        low, high = self.delay_calls
        if not 0 <= low <= high <= 20:
            raise ValueError(f"delay_calls: {list(self.delay_calls)} is not a range within 0-20")
        return self


class Task(StrictModel, allow_inf_nan=False):
    """One thing an employee is asked to do, with its reference solution."""

    id: str = Field(description="Unique within the world; equals the folder name.")
    title: str = Field(min_length=1)
    world: str = Field(description="Name of the world folder this task runs in.")
    prompt: str = Field(
        min_length=1, description="What the employee is asked to do (the first user message)."
    )
    apps: list[App] = Field(default_factory=lambda: ["db"], description="Apps started in the container.")
    initial_state: Overlay = Field(
        default_factory=Overlay, description="Task-specific overlay on the world's initial state."
    )
    limits: Limits = Field(default_factory=Limits)
    split: Split = "train"
    tags: list[str] = Field(default_factory=list)
    bands: dict[str, ModelBand] = Field(
        default_factory=dict,
        description="Difficulty band per model key (gym.models.identity), written by `egym calibrate`.",
    )
    pass_threshold: float = Field(0.8, ge=0, le=1, description="Normalized score counted as a pass.")
    solution: str = Field(
        "solution/actions.yaml", description="Reference solution replayed by the oracle policy."
    )
    system_prompt: str | None = Field(None, description="Overrides the harness's default system prompt.")
    coworkers: list[Coworker] = Field(
        default_factory=list, description="People who answer the agent in chat during the episode."
    )
    path: Path = Field(Path("."), exclude=True, description="Folder holding task.yaml (set by the loader).")

    @model_validator(mode="before")
    @classmethod
    def _old_band(cls, data: Any) -> Any:
        if isinstance(data, dict) and "band" in data:
            data = {k: v for k, v in data.items() if k not in ("band", "calibration")} | {
                "bands": bands_of(data)
            }
        return data

    @property
    def key(self) -> str:
        """Globally unique name: `world/task-id`."""
        return f"{self.world}/{self.id}"


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise TaskError(f"{path}: file not found")
    return path.read_text()


def _read_yaml(path: Path) -> dict:
    return _yaml_mapping(path, _read_text(path))


def _yaml_mapping(path: Path, text: str) -> dict:
    """`text`, the contents of `path`, as a mapping; TaskError naming the file when it is not one."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a mapping at the top level")
    return data


def load_world(folder: str | Path) -> World:
    """The world in `folder`. Every episode asks for its world, so the file is parsed and validated once
    per process and content: an edited world.yaml is parsed anew, an unchanged one comes from the cache."""
    folder = Path(folder)
    return _parse_world(folder, _read_text(folder / "world.yaml"))


@functools.lru_cache(maxsize=64)
def _parse_world(folder: Path, text: str) -> World:
    path = folder / "world.yaml"
    try:
        return World.model_validate({**_yaml_mapping(path, text), "path": folder})
    except ValidationError as exc:
        raise TaskError(f"{path}: {describe_validation_error(exc, model=World)}") from None


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


def save_band(task: Task, model: str, band: Band, evidence: BandEvidence) -> None:
    """Write `model`'s calibrated band and its evidence into task.yaml beside the other models' bands,
    leaving the rest of the file as it is (an old single `band:` becomes model `unknown`'s)."""
    path = task.path / "task.yaml"
    bands = {key: entry.model_dump(mode="json") for key, entry in task.bands.items()}
    bands[model] = band_entry(band, evidence)
    kept, skipping = [], False
    for line in path.read_text().splitlines():
        if not line.startswith((" ", "\t")) and line.strip():  # a top-level key: its block starts here
            skipping = line.startswith(("band:", "calibration:", "bands:"))
        if not skipping:
            kept.append(line)
    text = (
        "\n".join(kept).rstrip("\n")
        + "\n"
        + yaml.safe_dump(
            {"bands": dict(sorted(bands.items()))}, sort_keys=False, default_flow_style=None, width=120
        )
    )
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def band_entry(band: Band, evidence: BandEvidence) -> dict[str, Any]:
    """A model's band as task.yaml and bands.yaml store it, figures rounded to what they can tell."""
    low, high = evidence.interval
    rounded = evidence.model_copy(
        update={"pass_rate": round(evidence.pass_rate, 3), "interval": (round(low, 3), round(high, 3))}
    )
    return ModelBand(band=band, calibration=rounded).model_dump(mode="json")
