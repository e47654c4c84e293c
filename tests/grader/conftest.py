"""Grader test helpers: rubric builders and a factory for purpose-built live sandboxes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grader.loader import parse_rubric
from grader.rubric import Rubric


def make_rubric(items: list[dict[str, Any]], task: str = "acme/test", **extra: Any) -> Rubric:
    """A validated Rubric from item dicts; fails the test with every problem when invalid."""
    rubric, problems = parse_rubric(json.dumps({"task": task, "items": items, **extra}))
    assert not problems, "\n".join(map(str, problems))
    assert rubric is not None
    return rubric


def py_item(id: str, check: str, points: int = 1, **fields: Any) -> dict[str, Any]:
    args = fields.pop("args", {})
    return {
        "id": id,
        "description": f"item {id}",
        "points": points,
        "kind": "python",
        "check": check,
        "args": args,
        **fields,
    }


@pytest.fixture(scope="module")
def live_sandbox(docker_image, tmp_path_factory):
    """Factory: start one sandbox from files written into a temp folder; all closed at module end."""
    from gym.sandbox import DockerSandbox
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import Overlay

    started = []

    def start(*, apps=("db",), sql: str = "", chat: str | None = None, files: dict[str, bytes] | None = None):
        folder = tmp_path_factory.mktemp("initial")
        overlay = Overlay()
        if sql:
            (folder / "data.sql").write_text(sql)
            overlay.sql.append("data.sql")
        if chat is not None:
            (folder / "chat.yaml").write_text(chat)
            overlay.chat.append("chat.yaml")
        if files:
            for name, data in files.items():
                target = folder / "ws" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            overlay.workspace = "ws"
        sandbox = DockerSandbox.start(
            docker_image, apps=apps, overlay=overlay_tar((overlay, Path(folder))), run_id="pytest-grader"
        )
        started.append(sandbox)
        return sandbox

    yield start
    for sandbox in started:
        sandbox.close()
