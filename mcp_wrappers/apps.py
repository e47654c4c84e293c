"""The apps a sandbox can run, each described by the `app.toml` in its folder: `mcp_wrappers/<name>/`.

An app is one folder. Its `app.toml` holds everything the rest of the project needs to know
about it: its one name (the name tasks list under `apps:`, the tool prefix `<name>.*`, the
folder), its MCP server, its line in the agent's system prompt, the overlay files it loads,
its built-in checks and the failures fault injection imitates. Its `image/` folder holds its
part of the rollout image (Debian packages, a build-time setup, start/stop/baseline scripts; read by
images/build.sh and egym-init). Nothing else lists the apps: gym, the grader and the image
discover them here (tests/test_apps.py fails on a list written anywhere else).

docs/architecture.md shows an app's folder and how to add one.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

HERE = Path(__file__).parent
DESCRIPTOR = "app.toml"


class _Strict(BaseModel):
    # mcp_wrappers runs in the container, without core (core.strict.StrictModel is the host's twin).
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fault(_Strict):
    """A failure of the real app that fault injection imitates (gym.harness.faults)."""

    name: str = Field(description="Recorded in the trajectory, e.g. 'chat.http_429'.")
    message: str = Field(description="What the tool returns instead; {retry_after} is filled in.")


class App(_Strict):
    """One app, as its app.toml describes it."""

    name: str = Field(
        pattern=r"^[a-z][a-z0-9_]*$", description="Its one name: folder, `apps:` entry, tool prefix."
    )
    title: str = Field(description="What it is, for people: 'Team chat (Mattermost)'.")
    server: str = Field(
        description="Its MCP server, run in the sandbox as `python3 -I -m SERVER` as the agent."
    )
    prompt: str = Field(description="Its line in the system prompt; {chat_username} is filled in.")
    prompt_compact: str = Field(
        description="The same for `prompt: compact`, cut from `prompt` word for word."
    )
    overlay: str | None = Field(
        None, description="The `initial_state:` key (and overlay folder) of the files it loads, if any."
    )
    overlay_help: str = Field("", description="What those files are (the task format's documentation).")
    checks: list[str] = Field(
        default_factory=list, description="Its built-in check modules: grader.checks.<name>."
    )
    faults: list[Fault] = Field(default_factory=list)
    folder: Path = Field(Path("."), exclude=True)


@functools.cache
def apps() -> dict[str, App]:
    """Every app, by name, from the descriptors under mcp_wrappers/ (sorted by name)."""
    found = {}
    for path in sorted(HERE.glob(f"*/{DESCRIPTOR}")):
        try:
            app = App.model_validate({**tomllib.loads(path.read_text()), "folder": path.parent})
        except (tomllib.TOMLDecodeError, ValidationError) as exc:
            raise ValueError(f"{path}: {exc}".splitlines()[0]) from None
        if app.name != path.parent.name:
            raise ValueError(f"{path}: name {app.name!r} is not its folder's name {path.parent.name!r}")
        found[app.name] = app
    return found


def app(name: str) -> App:
    """The app called `name`; a one-line error naming the apps there are."""
    try:
        return apps()[name]
    except KeyError:
        raise KeyError(f"no app {name!r} (apps: {', '.join(apps())})") from None
