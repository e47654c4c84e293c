"""`egym serve-env`: egym's tasks as an environment server that other trainers' clients speak to."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Literal

import typer

from gym.cli.errors import friendly, stderr
from gym.cli.options import (
    CHAT,
    HARNESS,
    HOST,
    JUDGE_MAX_TOKENS,
    JUDGE_SAME_MODEL,
    JUDGE_TIMEOUT,
    LEVELS,
    SEEDS,
    TASKS_HELP,
    Chat,
    harness_settings,
    judge_options,
    select_tasks,
    use_chat,
)

# --protocol NAME -> the server class ("module:Class", imported when served) and what it speaks.
# Every class takes (tasks, *, run_id, harness, judge_options, idle_timeout_s, max_episodes),
# is a gym.interop.episodes.EnvironmentServer: `catalog`, `label`, `run_id` and `app()` (ASGI).
PROTOCOLS = {
    "ors": ("gym.interop.ors:OrsServer", "the Open Reward Standard (HTTP and server-sent events; ors-sdk)"),
    "nemo-gym": ("gym.interop.nemo_gym:NemoGymServer", "a NeMo Gym resources server (seed, tools, verify)"),
    "openenv": (
        "gym.interop.openenv:OpenEnvServer",
        "OpenEnv (WebSocket reset/step with MCP tool actions; openenv-core)",
    ),
}
ProtocolName = Literal["ors", "nemo-gym", "openenv"]  # the keys of PROTOCOLS (a test keeps them equal)


@friendly
def serve_env(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    protocol: ProtocolName = typer.Option(
        ..., "--protocol", help="What to speak: " + "; ".join(f"{k} ({v[1]})" for k, v in PROTOCOLS.items())
    ),
    host: str = HOST,
    port: int = typer.Option(8080, "--port", help="TCP port to listen on."),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    harness: list[str] = HARNESS,
    chat: Chat | None = CHAT,
    idle_timeout: float = typer.Option(
        300.0,
        "--idle-timeout",
        min=1,
        help="Seconds without a request (pings count) before an episode is removed.",
    ),
    max_episodes: int = typer.Option(32, "--max-episodes", min=1, help="Episodes (containers) held at once."),
    run: str | None = typer.Option(
        None, "--run", help="Run label on the containers (default PROTOCOL-<random>)."
    ),
    judge_same_model: bool = JUDGE_SAME_MODEL,
    judge_timeout: float | None = JUDGE_TIMEOUT,
    judge_max_tokens: int | None = JUDGE_MAX_TOKENS,
) -> None:
    """Serve tasks (folders, families, instances) as an RL environment: episodes, tools, submit -> reward."""
    import importlib

    import uvicorn

    from gym.sandbox.docker_client import default_image, require_image

    use_chat(chat)

    found = select_tasks(tasks, seeds, levels)
    require_image(default_image())  # fail now, not at the first episode
    module, _, name = PROTOCOLS[protocol][0].partition(":")
    server = getattr(importlib.import_module(module), name)(
        found,
        run_id=run or f"{protocol}-{uuid.uuid4().hex[:8]}",
        harness=harness_settings(harness),
        judge_options=judge_options(judge_same_model, judge_timeout, judge_max_tokens),
        idle_timeout_s=idle_timeout,
        max_episodes=max_episodes,
    )
    splits = ", ".join(f"{split} {len(items)}" for split, items in server.catalog.by_split.items())
    stderr.print(
        f"egym {server.label} on http://{host}:{port}: {len(found)} tasks ({splits}); "
        f"run {server.run_id}; Ctrl-C to stop",
        highlight=False,
    )
    uvicorn.run(server.app(), host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("serve-env")(serve_env)
