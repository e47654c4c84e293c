"""One docker SDK client per process, with errors a user can act on."""

from __future__ import annotations

import functools
import os

import docker
import docker.errors

from core.errors import SandboxError

# The rollout image by its chat server: egym's compatible service, or real Mattermost (images/mattermost/).
CHAT_IMAGES = {"compat": "egym/world:latest", "real": "egym/world:mattermost"}
LABEL = "egym.managed"


def default_image() -> str:
    """The image rollouts start from: $EGYM_IMAGE (which `--chat` sets), else the compatible-chat one.

    Read at each call, not at import: a command's `--chat` applies to everything it starts.
    """
    return os.environ.get("EGYM_IMAGE") or CHAT_IMAGES["compat"]


def select_chat(chat: str | None) -> None:
    """`--chat real|compat`: this process and its workers start rollouts from that chat server's image."""
    if chat is None:
        return
    if chat not in CHAT_IMAGES:
        raise SandboxError(f"--chat {chat!r}: expected one of {', '.join(CHAT_IMAGES)}")
    image, chosen = CHAT_IMAGES[chat], os.environ.get("EGYM_IMAGE")
    if chosen and chosen != image:
        raise SandboxError(f"--chat {chat} wants image {image} but EGYM_IMAGE is {chosen}: drop one of them")
    os.environ["EGYM_IMAGE"] = image  # Ray workers and subprocesses inherit it


@functools.cache
def client() -> docker.DockerClient:
    try:
        c = docker.from_env(timeout=120)
        c.ping()
    except docker.errors.DockerException as exc:
        reason = str(exc).splitlines()[0][:160]
        raise SandboxError(
            f"Docker engine not reachable ({reason}): run `make setup`, or start dockerd and check DOCKER_HOST"
        ) from None
    return c


def require_image(name: str) -> None:
    try:
        client().images.get(name)
    except docker.errors.ImageNotFound:
        if name == "egym/world:mattermost":
            hint = "run `make mattermost` (needs Go 1.24+)"
        else:
            hint = "run `make images`" if name.startswith("egym/") else "build or pull it first"
        raise SandboxError(f"image '{name}' not found in the local Docker engine: {hint}") from None
