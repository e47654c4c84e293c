"""One docker SDK client per process, with errors a user can act on."""

from __future__ import annotations

import functools
import os

import docker
import docker.errors

from core.errors import SandboxError

# EGYM_IMAGE picks another rollout image, e.g. one built with real Mattermost (images/mattermost/).
DEFAULT_IMAGE = os.environ.get("EGYM_IMAGE", "egym/world:latest")
LABEL = "egym.managed"


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
        hint = "run `make images`" if name.startswith("egym/") else "build or pull it first"
        raise SandboxError(f"image '{name}' not found in the local Docker engine: {hint}") from None
