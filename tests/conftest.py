"""Shared fixtures. Tests that need Docker use the real engine and the egym/world image.

`make test` builds the image first; when the engine or image is missing the
tests fail with the fix in the message (they never skip silently).
"""

from __future__ import annotations

import pytest

from core.errors import SandboxError


@pytest.fixture(scope="session")
def docker_image() -> str:
    from gym.sandbox.docker_client import DEFAULT_IMAGE, require_image

    try:
        require_image(DEFAULT_IMAGE)
    except SandboxError as exc:
        pytest.fail(f"{exc} (run `make setup`)", pytrace=False)
    return DEFAULT_IMAGE


@pytest.fixture
def sandbox(docker_image):
    """A fresh container with PostgreSQL running; removed after the test."""
    from gym.sandbox import DockerSandbox

    sb = DockerSandbox.start(docker_image, run_id="pytest")
    yield sb
    sb.close()
