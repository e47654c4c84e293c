"""Helpers for the chat tests: the overlay of data/chat_*.yaml and the grader's snapshot."""

from __future__ import annotations

import json
from pathlib import Path

from grader.probe import READER, SNAPSHOT

DATA = Path(__file__).parent / "data"
CHAT_FILES = ["chat_world.yaml", "chat_task.yaml"]  # the world's file, then a task overlay that adds to it


def chat_overlay() -> bytes:
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import Overlay

    return overlay_tar((Overlay(chat=CHAT_FILES), DATA))


def chat_snapshot(sandbox) -> dict:
    """The grader's view of chat: the snapshot, run as the grader runs it."""
    result = sandbox.exec(SNAPSHOT, user=READER, timeout=60)
    assert result.ok, result.output
    return json.loads(result.output)
