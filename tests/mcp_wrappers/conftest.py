"""Chat fixtures: a real container with PostgreSQL and the chat service, seeded with data/chat_*.yaml.

One container per test module (module scope) keeps the chat tests fast; tests that
change chat state use names no other test of the module relies on.
"""

from __future__ import annotations

import pytest

from tests.mcp_wrappers.chat_support import chat_overlay, chat_snapshot


@pytest.fixture(scope="module")
def chat_sandbox(docker_image):
    """A seeded chat container shared by the tests of one module."""
    from gym.sandbox import DockerSandbox

    sandbox = DockerSandbox.start(docker_image, apps=("postgres", "chat"), overlay=chat_overlay(),
                                  run_id="pytest-chat")
    yield sandbox
    sandbox.close()


@pytest.fixture
def chat_state(chat_sandbox):
    """Call it for a fresh snapshot of the chat state."""
    return lambda: chat_snapshot(chat_sandbox)
