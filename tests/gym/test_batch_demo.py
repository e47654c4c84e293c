"""`make demo` (scripts/demo.sh) on the mini task: oracle vs null without a key, a model's scores with one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.gym.task_fixture import write_mini_world

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]
UPDATE = json.dumps({"command": "psql -c \"UPDATE orders SET status = 'shipped' WHERE id = 2\""})


def demo(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EGYM_JUDGE"))}
    tasks = write_mini_world(tmp_path)
    env = {
        **clean,
        "DEMO_TASKS": str(tasks),
        "DEMO_MODEL_TASKS": "",  # the bundled model's part is tested below
        "EGYM_STORE": str(tmp_path / "runs.db"),
        "COLUMNS": "160",
        **env,
    }
    return subprocess.run(
        ["bash", "scripts/demo.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_demo_without_a_key_validates_then_compares_oracle_and_null(tmp_path, docker_image):
    result = demo(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "1/1 task(s) valid" in out
    table = out[out.index("scores: the reference solution vs doing nothing") :]
    assert "mini/ship-order" in table and "8/8 (100%)" in table and "0/8 (0%)" in table


def test_demo_with_an_endpoint_runs_the_model(tmp_path, docker_image):
    def respond(request: dict) -> Reply:
        if request["messages"][-1]["role"] == "tool":
            return Reply.text("Order 2 is shipped.")
        return Reply.tool_calls([("bash", UPDATE)])

    with FakeOpenAI(respond) as server:
        result = demo(
            tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test", OPENAI_MODEL="tiny-fake"
        )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "--policy openai --model tiny-fake" in out
    scores = out[out.index("== scores") :]
    assert "mini/ship-order" in scores and "5/8" in scores  # shipped the order, wrote no note


@pytest.mark.model
def test_demo_without_a_key_also_runs_the_bundled_model(tmp_path, docker_image):
    result = demo(tmp_path, DEMO_MODEL_TASKS=str(tmp_path / "tasks" / "mini" / "ship-order"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    scores = result.stdout[result.stdout.index("vs SmolLM2-135M") :]
    assert "hf smollm2" in scores.replace("\n", " ") and "mini/ship-order" in scores
