"""`egym serve-env --protocol openenv`, spoken to by OpenEnv's own clients (openenv-core 0.3.0).

The server runs as the CLI in a subprocess with real sandboxes; the clients run in a
venv of their own (openenv-core pulls fastmcp 3+, gradio and openai 2.7+) through
openenv_driver.py: egym's typed client (gym/interop/openenv_client.py, which imports
no egym) for reset, tools, the oracle's calls and answer (reward 1.0, egym's grade)
and a wrong answer; OpenEnv's stock MCPToolClient (WebSocket and HTTP /mcp) and
GenericEnvClient, up to the turn limit; unknown tasks; a client killed mid-episode.
The tests without the docker marker check the refusals and the reward of an
incomplete grade in process.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from grader.grade import Grade, ItemResult
from gym.cli import app
from gym.interop.openenv import OpenEnvServer
from gym.interop.openenv_wire import graded, submit_observation
from gym.task_refs import resolve
from tests.interop.serving import containers, oracle, serve_env, wait_until
from tests.interop.side_venv import side_venv

ROOT = Path(__file__).resolve().parents[2]
KEYS = ["acme/product-price-l0-s0", "acme/product-price-l0-s1"]
OPENENV = ["openenv-core==0.3.0"]


def openenv_server(idle_timeout: float = 120):
    """`egym serve-env --protocol openenv` over two level-0 instances on a free port: (URL, run label)."""
    return serve_env(
        "openenv", "acme/product-price", "--levels", "0", "--seeds", "0-1", idle_timeout=idle_timeout
    )


@pytest.fixture(scope="module")
def client_python(tmp_path_factory) -> tuple[str, dict[str, str]]:
    """The side venv's python, and an environment whose PYTHONPATH holds only a copy of the typed client."""
    python = side_venv("openenv", OPENENV)
    folder = tmp_path_factory.mktemp("openenv-client")
    shutil.copy(ROOT / "gym" / "interop" / "openenv_client.py", folder)  # what an OpenEnv user does
    return python, {**os.environ, "PYTHONPATH": str(folder)}


@pytest.fixture(scope="module")
def server(docker_image) -> Iterator[tuple[str, str]]:
    with openenv_server() as running:
        yield running


def drive(client_python, url: str, scenario: str, **args) -> dict:
    python, env = client_python
    driver = str(ROOT / "tests" / "interop" / "openenv_driver.py")
    done = subprocess.run(
        [python, driver, url, scenario, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.docker
@pytest.mark.slow
def test_the_oracles_calls_and_answer_earn_reward_1_which_is_egyms_grade(client_python, server):
    url, run = server
    calls, answer = oracle(KEYS[0])
    out = drive(
        client_python, url, "oracle", task=KEYS[0], calls=[[s.tool, s.args] for s in calls], answer=answer
    )
    assert (
        "Platform Health Check" in out["prompt"] and "Jordan Lee" in out["prompt"]
    )  # the task and the identity
    assert {"bash", "db.query", "submit"} <= set(out["reset_tools"]) and out["listed"] == out["reset_tools"]
    assert out["reset_metadata"]["task_id"] == KEYS[0] and out["reset_metadata"]["turns_left"] == 6
    (call,) = out["calls"]
    assert (
        "3200" in call["data"]
        and call["metadata"]["is_error"] is False
        and call["metadata"]["turns_left"] == 5
    )
    assert "one" in out["text"] and out["state"]["step_count"] == 2 and out["state"]["done"] is False
    last = out["final"]
    assert (
        last["done"] is True and last["reward"] == 1.0 == last["metadata"]["score"]
    )  # the reward is egym's grade
    assert last["metadata"]["terminated"] is True and last["metadata"]["truncated"] is False
    assert last["metadata"]["incomplete"] is False and last["metadata"]["passed"] is True
    assert set(last["items"]) == {"pass"}
    assert "is over (answered); reset to start another (code: SESSION_ERROR)" in out["after"]
    assert out["state_after"]["done"] is True and out["state_after"]["stop_reason"] == "answered"
    wait_until(lambda: not containers(run, out["state"]["episode_id"]), 30, "the episode's container removed")


@pytest.mark.docker
@pytest.mark.slow
def test_a_wrong_answer_earns_less_and_tool_mistakes_are_results_to_read(client_python, server):
    out = drive(client_python, server[0], "wrong", answer="I could not find the price.")
    assert out["task"] == KEYS[1]
    assert out["typo_metadata"]["is_error"] and "did you mean db.query" in out["typo"].lower()
    assert 'submit takes {"answer": "..."}' in out["refused"] and "invalid_args" in out["refused"]
    last = out["final"]
    assert last["done"] and last["reward"] is not None and last["reward"] < 1.0
    assert last["metadata"]["passed"] is False and last["metadata"]["incomplete"] is False


@pytest.mark.docker
@pytest.mark.slow
def test_unknown_tasks_and_steps_without_an_episode_are_protocol_errors(client_python, server):
    out = drive(client_python, server[0], "unknown")
    assert (
        "unknown task 'acme/product-prize-l0-s0': this server serves 2 tasks; "
        "did you mean 'acme/product-price-l0-s0'? (code: VALIDATION_ERROR)" in out["task"]
    )
    assert "index 7 is out of range: split 'train' has 2 tasks" in out["index"]
    assert "step before reset" in out["step"] and "SESSION_ERROR" in out["step"]
    assert {"bash", "submit"} <= set(out["tools_before_reset"])  # OpenEnv lists tools before any reset
    assert containers(server[1]) == []


@pytest.mark.docker
@pytest.mark.slow
def test_openenvs_stock_clients_work_unchanged_up_to_the_turn_limit(client_python, server):
    out = drive(client_python, server[0], "stock", task=KEYS[1], answer="no idea")
    assert "Jordan Lee" in out["mcp_reset_prompt"] and "db.query" in out["mcp_tools"]
    assert out["mcp_echo"].strip() == "42" and out["mcp_final"]["done"] is True
    assert out["http_session"].startswith("mcp-") and "submit" in out["http_tools"]
    assert out["http_echo"].strip() == "hello"
    steps = out["generic_steps"]  # six turns: the sixth ends the episode, graded as it stands
    assert [s["done"] for s in steps] == [False] * 5 + [True] and steps[-1]["reward"] == 0.0
    last = out["generic_last"]
    assert last["stop_reason"] == "turn_limit" and last["truncated"] is True and last["terminated"] is False
    assert "is over (turn_limit)" in out["generic_after"]
    wait_until(lambda: containers(server[1]) == [], 30, "every episode's container removed")


@pytest.mark.docker
@pytest.mark.slow
def test_a_client_that_disconnects_mid_episode_has_its_container_removed(client_python, server):
    url, run = server
    python, env = client_python
    driver = str(ROOT / "tests" / "interop" / "openenv_driver.py")
    args = json.dumps({"task": KEYS[0]})
    killed = subprocess.Popen(
        [python, driver, url, "disconnect", args], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        episode = json.loads(killed.stdout.readline())["episode_id"]
        assert len(containers(run, episode)) == 1
    finally:
        killed.kill()  # no close message, no close frame: the socket just drops
        killed.wait()
    wait_until(lambda: not containers(run, episode), 30, "the dropped client's container removed")


# -- in process, without Docker -------------------------------------------------------------------


def test_bad_requests_are_refused_without_docker():
    server = OpenEnvServer(resolve(KEYS[:1]), run_id="openenv-unit")
    with TestClient(server.app()) as http, http.websocket_connect("/ws") as ws:

        def send(message) -> dict:
            ws.send_text(message if isinstance(message, str) else json.dumps(message))
            return ws.receive_json()

        assert send({"type": "state"}) == {"type": "state", "data": {"episode_id": None, "step_count": 0}}
        tools = send({"type": "step", "data": {"type": "list_tools"}})["data"]["observation"]["tools"]
        assert {"bash", "submit"} <= {t["name"] for t in tools} and all("input_schema" in t for t in tools)
        refused = {
            "step first": (
                {"type": "step", "data": {"type": "call_tool", "tool_name": "bash"}},
                "SESSION_ERROR",
            ),
            "task": ({"type": "reset", "data": {"task": "acme/nope"}}, "VALIDATION_ERROR"),
            "typo": ({"type": "reset", "data": {"taks": KEYS[0]}}, "VALIDATION_ERROR"),
            "both": ({"type": "reset", "data": {"task": KEYS[0], "seed": 1}}, "VALIDATION_ERROR"),
            "empty split": ({"type": "reset", "data": {"split": "val"}}, "VALIDATION_ERROR"),
            "index": ({"type": "reset", "data": {"index": 3}}, "VALIDATION_ERROR"),
            "action": ({"type": "step", "data": {"tool_name": "bash"}}, "VALIDATION_ERROR"),
            "type": ({"type": "render"}, "UNKNOWN_TYPE"),
            "json": ("{", "INVALID_JSON"),
        }
        for what, (message, code) in refused.items():
            answer = send(message)
            assert answer["type"] == "error" and answer["data"]["code"] == code, (what, answer)
            assert answer["data"]["message"] and "\n" not in answer["data"]["message"], what
        assert "did you mean 'task'?" in send({"type": "reset", "data": {"taks": "x"}})["data"]["message"]
        rpc = send(
            {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "bash"}}}
        )
        assert (
            rpc["data"]["error"]["code"] == -32602
            and "openenv/session/create" in rpc["data"]["error"]["message"]
        )
        http_refused = {
            "step": (
                http.post("/step", json={"action": {"type": "list_tools"}, "episode_id": "nobody"}),
                404,
            ),
            "step id": (http.post("/step", json={"action": {"type": "list_tools"}}), 422),
            "reset": (http.post("/reset", json={"task": "acme/nope"}), 404),
            "json": (http.post("/reset", content=b"{"), 422),
            "state": (http.get("/state", params={"episode_id": "nobody"}), 404),
        }
        for what, (response, status) in http_refused.items():
            assert response.status_code == status, (what, response.text)
            assert "\n" not in response.json()["detail"], what
        assert http.get("/health").json() == {"status": "healthy"}
        assert set(http.get("/schema").json()) == {"action", "observation", "state"}
        unknown = http.post("/mcp", json={"jsonrpc": "2.0", "method": "resources/list", "id": 4}).json()
        assert unknown == {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32601, "message": "Method not found: resources/list"},
        }
    assert server.episodes.live == {}  # nothing was opened
    assert os.environ.get("DOCKER_HOST", "").startswith("unix:///nonexistent")  # really ran without Docker


def test_an_incomplete_grade_has_no_reward_not_a_zero():
    (task,) = resolve(KEYS[:1])
    items = [
        ItemResult(id="price", points=2, status="pass", earned=2),
        ItemResult(id="tone", kind="judge", points=2, status="error", error="no judge model"),
    ]
    grade = Grade(task=task.key, earned=2, possible=4, normalized=0.5, incomplete=True, items=items)
    last = graded(submit_observation(), grade, task, "answered")
    assert last["done"] is True and last["reward"] is None
    metadata = last["observation"]["metadata"]
    assert metadata["incomplete"] is True and metadata["score"] == 0.5 and metadata["terminated"] is True
    assert last["observation"]["result"]["data"]["reward"] is None  # what MCPToolClient.call_tool returns
    assert "incomplete (1 judge item not graded)" in last["observation"]["result"]["content"][0]["text"]


def test_the_typed_client_imports_only_openenv_and_pydantic():
    """It runs in the trainer's venv, where egym cannot be installed."""
    tree = ast.parse((ROOT / "gym" / "interop" / "openenv_client.py").read_text())
    modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {m.split(".")[0] for m in modules} <= {"__future__", "typing", "openenv", "pydantic"}


def test_openenv_is_a_protocol_of_serve_env():
    result = CliRunner().invoke(app, ["serve-env", "--protocol", "openenvv", KEYS[0]])
    assert result.exit_code == 2 and "'openenvv' is not one of 'ors', 'nemo-gym', 'openenv'" in result.output
