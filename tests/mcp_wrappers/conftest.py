"""Chat fixtures: a real container with PostgreSQL and the chat service, seeded with data/chat_*.yaml.

One container per test module (module scope) keeps the chat tests fast; tests that
change chat state use names no other test of the module relies on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CHAT_SEEDS = ["chat_world.yaml", "chat_task.yaml"]  # world seed, then a task overlay that adds to it


def chat_overlay() -> bytes:
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import SeedOverlay

    return overlay_tar((SeedOverlay(chat=CHAT_SEEDS), DATA))


@pytest.fixture(scope="module")
def chat_sandbox(docker_image):
    """A seeded chat container shared by the tests of one module."""
    from gym.sandbox import DockerSandbox

    sandbox = DockerSandbox.start(docker_image, apps=("postgres", "chat"), overlay=chat_overlay(),
                                  run_id="pytest-chat")
    yield sandbox
    sandbox.close()


def chat_snapshot(sandbox) -> dict:
    """The grader's view of chat: `python3 -m mcp_wrappers.mattermost.snapshot` run as root."""
    result = sandbox.exec(["python3", "-m", "mcp_wrappers.mattermost.snapshot"], user="root", timeout=60)
    assert result.ok, result.output
    return json.loads(result.output)


@pytest.fixture
def chat_state(chat_sandbox):
    return lambda: chat_snapshot(chat_sandbox)
