"""The sandbox lifecycle, written once: start a task's sandbox, hand it out, always remove it.

`task_sandbox(task)` is the only place a task's container is started and closed;
gym.episode.open_episode enters it for every rollout, replay, validation and
initial-query expansion. The sandbox is the world's image plus the task's
own overlay.

The world's initial state (schema, data, chat history, documents) is baked into an image
`egym/world-<name>:<digest>` once, so a rollout starts in well under a second
instead of reloading the world each time. The digest covers the base image
and every byte of the initial state, so editing it makes a new image.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import io
import json
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

import docker.errors

from core.errors import SandboxError
from gym.sandbox.docker_client import client, default_image, require_image
from gym.sandbox.docker_sandbox import DockerSandbox, SandboxLimits
from gym.sandbox.overlay import overlay_tar
from gym.tasks import Task, World, world_of

S = TypeVar("S")

WORLD_DOCKERFILE = """\
FROM {base}
COPY overlay/ /egym/overlay/
RUN EGYM_APPS={apps} /opt/egym/bin/egym-init bake
LABEL egym.world={name}
"""


def _lock(name: str):
    path = Path(tempfile.gettempdir()) / "egym-locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("w")
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def world_image(world: World, base: str | None = None) -> str:
    """Tag of the image holding `world`'s initial state on `base` (default: default_image()), built on first use
    (cached by content digest)."""
    base = base or default_image()
    require_image(base)
    base_id = client().images.get(base).id
    apps = ",".join(sorted(world.apps))
    dockerfile = WORLD_DOCKERFILE.format(base=base_id, apps=apps, name=world.name).encode()
    context = overlay_tar(
        (world.initial_state, world.path), extra={"Dockerfile": dockerfile}, prefix="overlay/"
    )
    digest = hashlib.sha256(context).hexdigest()[:12]
    tag = f"egym/world-{world.name}:{digest}"
    with _lock(f"world-{world.name}"):
        try:
            client().images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        try:
            client().images.build(
                fileobj=io.BytesIO(context), custom_context=True, tag=tag, rm=True, forcerm=True
            )
        except docker.errors.BuildError as exc:
            raise SandboxError(f"world '{world.name}' ({world.path}): {_load_error(exc)}") from None
    return tag


def _load_error(exc: docker.errors.BuildError) -> str:
    """The EGYM ERROR line egym-init printed, or the last build output."""
    lines = []
    for chunk in exc.build_log:
        lines.extend(str(chunk.get("stream", "")).splitlines() if isinstance(chunk, dict) else [])
    for line in lines:
        if line.startswith("EGYM ERROR"):
            return "loading the initial state failed: " + line.removeprefix("EGYM ERROR").strip()
    return f"image build failed: {exc.msg} {json.dumps(lines[-3:])}"


@contextlib.contextmanager
def task_sandbox(
    task: Task,
    *,
    world: World | None = None,
    run_id: str = "adhoc",
    rollout_id: str | None = None,
    base: str | None = None,
    limits: SandboxLimits = SandboxLimits(),
) -> Iterator[DockerSandbox]:
    """A running sandbox of `task`, removed on exit whatever happened inside.

    It starts from the world's image (the initial state baked in), with the task's
    overlay applied and its apps up.
    """
    world = world or world_of(task)
    image = world_image(world, base)
    overlay = overlay_tar((task.initial_state, task.path))
    sandbox = DockerSandbox.start(
        image, apps=tuple(task.apps), overlay=overlay, run_id=run_id, rollout_id=rollout_id, limits=limits
    )
    try:
        yield sandbox
    finally:
        sandbox.close()


@contextlib.asynccontextmanager
async def in_worker_thread(manager: AbstractContextManager[S]) -> AsyncIterator[S]:
    """Enter and exit a blocking sandbox context manager (`task_sandbox`) in worker threads, from async code.

    If we are cancelled while the (sub-second) start runs, the thread still exits
    what it entered: a Ctrl-C never leaves a container behind.
    """
    lock, state = threading.Lock(), {"abandoned": False, "entered": False}

    def enter() -> S:
        sandbox = manager.__enter__()
        with lock:
            orphaned = state["abandoned"]
            state["entered"] = not orphaned
        if orphaned:
            manager.__exit__(None, None, None)
        return sandbox

    try:
        sandbox = await asyncio.to_thread(enter)
    except asyncio.CancelledError:
        with lock:
            state["abandoned"] = True
            entered = state["entered"]
        if entered:
            manager.__exit__(None, None, None)
        raise
    try:
        yield sandbox
    finally:
        await asyncio.to_thread(manager.__exit__, None, None, None)
