"""`egym serve-env --protocol nemo-gym`, driven by NeMo Gym's own code (nemo-gym from PyPI, in its venv).

The server runs as the CLI in a subprocess over two level-0 instances, with real
sandboxes; nemo_gym_driver.py (Python 3.12, NeMo Gym installed, no egym) runs NeMo
Gym's `simple_agent` with a scripted model against it, the way `ng_collect_rollouts`
does: seed_session, the oracle's db.query through the tool endpoint, verify with the
oracle's answer -> reward 1.0, the grade's score; then the same steps one by one with a
wrong answer -> a lower reward; an unknown task -> 404; no containers left. The tests
without the docker marker check the refusals and the payloads in process.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from unittest.mock import ANY

import pytest
from starlette.testclient import TestClient

from grader.grade import Grade, ItemResult
from gym.interop.nemo_gym import COOKIE, NemoGymServer
from gym.interop.nemo_gym_wire import (
    aggregate_metrics,
    final_answer,
    function_name,
    function_tool,
    tool_name,
    verify_answer,
)
from gym.task_refs import resolve
from tests.interop.serving import containers, oracle, serve_env
from tests.interop.side_venv import side_venv

ROOT = Path(__file__).resolve().parents[2]
NEMO_GYM = ["nemo-gym==0.4.0"]  # the newest version the package index serves here
TASKS = ["acme/product-price-l0-s0", "acme/product-price-l0-s1"]


def nemo_gym_server(idle_timeout: float = 120):
    """`egym serve-env --protocol nemo-gym acme/product-price --levels 0 --seeds 0-1`: (URL, run label)."""
    args = [
        "acme/product-price",
        "--levels",
        "0",
        "--seeds",
        "0-1",
        "-H",
        "max_turns=30",
    ]  # room for the timed calls
    return serve_env("nemo-gym", *args, idle_timeout=idle_timeout)


def scripted(key: str, answer: str | None = None) -> dict:
    """The oracle's calls (as NeMo Gym function names) and its answer, or `answer`."""
    calls, right = oracle(key)
    return {"task": key, "calls": [[function_name(s.tool), s.args] for s in calls], "answer": answer or right}


@pytest.mark.docker
@pytest.mark.slow
def test_nemo_gyms_simple_agent_rolls_out_on_egym(docker_image, tmp_path):
    python = side_venv("nemo-gym", NEMO_GYM, python="3.12")
    plan = {
        "runs": [scripted(TASKS[0])],
        "direct": scripted(TASKS[1], answer="It costs 10.00 EUR."),
        "unknown_task": "acme/product-prize-l0-s0",
    }
    out = tmp_path / "results.json"
    with nemo_gym_server() as (url, run):
        done = subprocess.run(
            [python, str(ROOT / "tests/interop/nemo_gym_driver.py"), url, str(out)],
            input=json.dumps(plan),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        assert containers(run) == [], "verified episodes left containers"
    results = json.loads(out.read_text())

    rows = results["rows"]  # GET /rows, each parsed by NeMo Gym as a SimpleAgentRunRequest
    assert sorted(rows) == TASKS
    row = rows[TASKS[0]]
    assert row["agent_ref"] == {"type": "responses_api_agents", "name": "egym_simple_agent"}
    assert [m["role"] for m in row["responses_create_params"]["input"]] == ["system", "user"]
    assert "db__query" in {t["name"] for t in row["responses_create_params"]["tools"]}

    (rollout,) = results["runs"]  # the oracle through NeMo Gym's simple_agent
    assert "db__query" in rollout["offered"] and "bash" in rollout["offered"]
    assert (
        "Standard 2025 H1 | 3200" in rollout["tool_outputs"][0]
    )  # the real database's answer reached the model
    verify = rollout["verify"]
    assert verify["reward"] == 1.0 == verify["egym_grade"]["score"]
    assert verify["egym_grade"]["passed"] is True and verify["egym_grade"]["incomplete"] is False
    assert verify["egym_task"] == TASKS[0] and verify["response"]["output"][-1]["type"] == "message"

    direct = results["direct"]  # the same steps one by one, with a wrong answer
    assert (
        "Standard 2025 H1 | 6000" in direct["tool_outputs"][0]["text"]
        and direct["tool_outputs"][0]["status"] == 200
    )
    wrong = direct["verify"]["reward"]
    assert wrong < 1.0 and wrong == direct["verify"]["egym_grade"]["score"]
    assert direct["verify_again"] == {"status": 200, "json": direct["verify"]}  # a retry hears the same
    assert direct["call_after_verify"]["status"] == 410
    assert "was verified" in direct["call_after_verify"]["json"]["detail"]
    assert direct["call_without_session"]["status"] == 400

    unknown = results["unknown_task"]
    assert unknown["seed"] == {
        "status": 404,
        "json": {
            "detail": "unknown task 'acme/product-prize-l0-s0': this server serves 2 tasks; "
            "did you mean 'acme/product-price-l0-s0'?"
        },
    }
    assert unknown["raised"] == 404 and unknown["run_status"] == 500  # the agent's /run fails with it

    metrics = results["metrics"]  # /aggregate_metrics through the agent, parsed as AggregateMetrics
    assert metrics["agent_metrics"]["mean/reward"] == pytest.approx((1.0 + wrong) / 2)
    assert metrics["key_metrics"]["mean/passed"] == 0.5
    print(
        f"\nNeMo Gym rollout {rollout['seconds']:.2f} s; per tool call (episode up) "
        f"{sorted(direct['call_seconds'][1:])[len(direct['call_seconds'][1:]) // 2] * 1000:.1f} ms median"
    )


def test_bad_requests_are_refused_without_docker():
    """Refusals in process, before any container could start: one-line 4xx with a `detail`."""
    server = NemoGymServer(resolve(TASKS), run_id="nemo-gym-unit")
    with TestClient(server.app()) as http:
        row = {"responses_create_params": {"input": "hi"}}
        refused = {
            "no task": (http.post("/seed_session", json=row), 422),
            "unknown task": (http.post("/seed_session", json=row | {"egym_task": "acme/nope"}), 404),
            "bad json": (
                http.post("/seed_session", content=b"{", headers={"content-type": "application/json"}),
                422,
            ),
            "tool, no session": (http.post("/db__query", json={"sql": "SELECT 1"}), 400),
            "bad split": (http.get("/rows?split=validation"), 400),
            "metrics": (http.post("/aggregate_metrics", json={}), 422),
        }
        http.cookies.set(COOKIE, "nobody")  # a session cookie naming no episode
        refused |= {
            "tool, unknown episode": (http.post("/db__query", json={}), 404),
            "verify, no response": (http.post("/verify", json=row), 422),
            "verify, unknown episode": (http.post("/verify", json=row | {"response": {}}), 404),
        }
        for what, (response, status) in refused.items():
            assert response.status_code == status, (what, response.text)
            detail = response.json()["detail"]
            assert isinstance(detail, str) and detail and "\n" not in detail, what
        assert "open it with POST /seed_session" in refused["tool, unknown episode"][0].json()["detail"]
        assert http.get("/").json() == {"status": "ok"}
    assert os.environ.get("DOCKER_HOST", "").startswith("unix:///nonexistent")  # really ran without Docker


def test_tool_names_map_to_function_names_and_back():
    for tool in ["db.query", "chat.post_message", "office.read_sheet", "bash"]:
        assert tool_name(function_name(tool)) == tool
    assert function_name("db.query") == "db__query"
    with pytest.raises(ValueError, match="would not map back"):
        function_name("db.run__it")
    schema = {
        "type": "function",
        "function": {"name": "db.query", "description": "Run SQL.", "parameters": {}},
    }
    assert function_tool(schema) == {
        "type": "function",
        "name": "db__query",
        "description": "Run SQL.",
        "parameters": {},
        "strict": False,
    }


def test_the_answer_is_the_last_assistant_message():
    output = [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
        {"type": "function_call", "name": "db__query", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "3200.00"},
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "output_text", "text": "It costs "},
                {"type": "output_text", "text": "3200 EUR."},
            ],
        },
    ]
    assert final_answer({"output": output}) == "It costs 3200 EUR."
    assert final_answer({"output": output[:3]}) == "Looking."
    assert final_answer({"output": []}) == ""


def test_aggregate_metrics_per_row_and_overall():
    responses = [
        {"_ng_task_index": 0, "reward": 1.0, "egym_grade": {"passed": True}},
        {"_ng_task_index": 0, "reward": 0.5, "egym_grade": {"passed": False}},
        {"_ng_task_index": 1, "reward": 0.0, "egym_grade": {"passed": False}},
    ]
    metrics = aggregate_metrics(responses)
    assert metrics["agent_metrics"]["mean/reward"] == 0.5 and metrics["key_metrics"]["mean/passed"] == 1 / 3
    assert [g["mean/reward"] for g in metrics["group_level_metrics"]] == [0.75, 0.0]
    assert aggregate_metrics([]) == {"group_level_metrics": [], "agent_metrics": {}, "key_metrics": {}}


def test_an_incomplete_grade_is_refused_not_a_zero_reward():
    (task,) = resolve(TASKS[:1])
    items = [
        ItemResult(id="price", points=2, status="pass", earned=2),
        ItemResult(id="tone", kind="judge", points=2, status="error", error="no judge model"),
    ]
    grade = Grade(task=task.key, earned=2, possible=4, normalized=0.5, incomplete=True, items=items)
    status, body = verify_answer(grade, task, "answered")
    assert status == 503 and "reward" not in body
    assert body["detail"] == (
        "acme/product-price-l0-s0: the grade is incomplete (1 judge item not graded) (2/4): no reward is given for it"
    )
    assert body["egym_grade"]["incomplete"] is True and body["egym_grade"]["items"][1]["status"] == "error"
    complete = grade.model_copy(
        update={"incomplete": False, "items": items[:1], "possible": 2, "normalized": 1.0}
    )
    assert verify_answer(complete, task, "answered") == (200, {"reward": 1.0, "egym_grade": ANY})
