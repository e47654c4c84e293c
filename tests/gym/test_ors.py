"""`egym serve-env --protocol ors`, spoken to by the official Open Reward Standard client (ors-sdk).

The server runs as the CLI in a subprocess, with real sandboxes: splits and tasks,
an episode with a real database query, the oracle's answer (reward 1.0) and a
wrong one, the turn limit, two episodes at once, an abandoned episode closed by the
idle timeout, and bad ids answered with a one-line 4xx. The tests without the
docker marker check the refusals, the reward of an incomplete grade and the SSE
chunking in process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import httpx
import pytest
from ors.client import ORS, AsyncORS, Task, ToolCallError
from starlette.testclient import TestClient
from typer.testing import CliRunner

from grader.grade import Grade, ItemResult
from gym.cli import app
from gym.interop.ors import OrsServer
from gym.interop.ors_wire import chunks, graded_output
from gym.task_refs import resolve
from tests.interop.serving import containers, oracle, serve_env, wait_until

ROOT = Path(__file__).resolve().parents[2]
# Two train instances and one val (a train family's split hangs on the instance's question: a changed
# prompt or initial state can move an instance; tests/tasks/test_families.py checks the mechanism itself).
TASKS = ["acme/product-price-l0-s0", "acme/product-price-l0-s1", "acme/product-price-l1-s4"]


@contextlib.contextmanager
def ors_server(*tasks: str, idle_timeout: float = 120, max_episodes: int = 8) -> Iterator[tuple[str, str]]:
    """`egym serve-env --protocol ors TASKS...` on a free port: (base URL, run label); stopped like Ctrl-C."""
    with serve_env("ors", *tasks, idle_timeout=idle_timeout, max_episodes=max_episodes) as running:
        yield running


def spec(key: str) -> Task:
    return Task(environment_name="egym", task_spec={"id": key})


@pytest.fixture(scope="module")
def server(docker_image) -> Iterator[tuple[str, str]]:
    with ors_server(*TASKS) as running:
        yield running


@pytest.fixture
def client(server) -> Iterator[ORS]:
    with ORS(base_url=server[0]) as ors:
        yield ors


@pytest.mark.docker
def test_splits_and_tasks_are_egyms(client):
    env = client.environment("egym")
    assert env.list_splits() == ["train", "val", "test"]
    train = env.list_tasks("train")
    assert [t.task_spec["id"] for t in train] == TASKS[:2]
    assert train[0].task_spec["split"] == "train" and train[0].task_spec["apps"] == ["db"]
    assert [t.task_spec["id"] for t in env.list_tasks("val")] == [TASKS[2]]
    assert env.list_tasks("test") == [] and env.num_tasks("train") == 2
    assert env.get_task("val", 0).task_spec["id"] == TASKS[2]
    assert [t.task_spec["id"] for t in env.get_task_range("train", -1)] == [TASKS[1]]
    assert "submit" in [tool.name for tool in env.list_tools()]  # the tools every episode has


@pytest.mark.docker
def test_the_oracles_calls_and_answer_earn_reward_1_and_the_container_goes(client, server):
    env = client.environment("egym")
    calls, answer = oracle(TASKS[0])
    with env.session(task=env.list_tasks("train")[0]) as session:
        names = [tool.name for tool in session.list_tools()]  # answered once the episode is up
        assert len(containers(server[1], session.sid)) == 1
        assert {"bash", "db.query", "submit"} <= set(names)
        (prompt,) = session.get_prompt()
        assert "Platform Health Check" in prompt.text and "Jordan Lee" in prompt.text  # task and identity
        for step in calls:
            out = session.call_tool(step.tool, step.args)
            assert "3200" in out.blocks[0].text and out.reward is None and not out.finished
            assert out.metadata["is_error"] is False and out.metadata["turns_left"] == 5
        graded = session.call_tool("submit", {"answer": answer})
        assert graded.reward == 1.0 and graded.finished
        assert graded.metadata["incomplete"] is False and graded.metadata["passed"] is True
        assert graded.metadata["stop_reason"] == "answered"
        assert {item["status"] for item in graded.metadata["items"]} == {"pass"}
        with pytest.raises(ToolCallError, match="submitted; it takes no more calls"):
            session.call_tool("db.query", {"sql": "SELECT 1"})
        again = session.call_tool("submit", {"answer": "something else"})
        assert again.reward == 1.0  # the first submit decided
        wait_until(lambda: not containers(server[1], session.sid), 30, "graded episode's container removed")


@pytest.mark.docker
def test_a_wrong_answer_earns_less_and_tool_mistakes_are_results_to_read(client):
    env = client.environment("egym")
    with env.session(task=spec(TASKS[1])) as session:
        typo = session.call_tool("db.querry", {"sql": "SELECT 1"})  # a turn, as in the harness
        assert typo.metadata["is_error"] and "did you mean db.query" in typo.blocks[0].text.lower()
        with pytest.raises(ToolCallError, match='submit takes {"answer": "..."}'):
            session.call_tool("submit", {"answr": "x"})  # refused, not run: the episode goes on
        graded = session.call_tool("submit", {"answer": "I could not find the price."})
        assert graded.finished and graded.reward is not None and graded.reward < 1.0
        assert graded.metadata["incomplete"] is False and graded.metadata["passed"] is False


@pytest.mark.docker
def test_past_the_turn_limit_calls_are_refused_and_submit_grades_what_was_done(client):
    env = client.environment("egym")
    with env.session(task=spec(TASKS[0])) as session:
        for _ in range(6):  # the task allows six turns
            session.call_tool("bash", {"command": "true"})
        with pytest.raises(ToolCallError, match=r"reached its turn limit \(6 calls\); submit to grade"):
            session.call_tool("bash", {"command": "true"})
        graded = session.call_tool("submit", {"answer": "too late to count"})
        assert graded.finished and graded.reward == 0.0 and graded.metadata["stop_reason"] == "turn_limit"


@pytest.mark.docker
async def test_two_episodes_at_once(server):
    url, run = server
    ors = AsyncORS(base_url=url)  # kept: dropping it closes its HTTP sessions
    env = ors.environment("egym")

    async def play(key: str) -> float | None:
        calls, answer = oracle(key)
        async with env.session(task=spec(key)) as session:
            await session.list_tools()  # waits until the episode is up
            for step in calls:
                await session.call_tool(step.tool, step.args)
            return (await session.call_tool("submit", {"answer": answer})).reward

    seen: set[str] = set()

    async def watch() -> None:
        while True:
            seen.update(await asyncio.to_thread(containers, run))
            await asyncio.sleep(0.5)

    watcher = asyncio.create_task(watch())
    try:
        assert await asyncio.gather(play(TASKS[0]), play(TASKS[2])) == [1.0, 1.0]
    finally:
        watcher.cancel()
        await env.client.close()
    assert len(seen) >= 2  # each episode had a container of its own


@pytest.mark.docker
def test_an_abandoned_episode_is_closed_after_the_idle_timeout(docker_image):
    first = {"split": "train", "index": 0}
    with ors_server(TASKS[0], idle_timeout=3, max_episodes=1) as (url, run):
        sid = f"abandoned-{uuid.uuid4().hex[:6]}"
        created = httpx.post(f"{url}/create", headers={"X-Session-ID": sid}, json=first)
        assert created.status_code == 200 and created.json() == {"sid": sid}
        full = httpx.post(f"{url}/create", headers={"X-Session-ID": "second"}, json=first)
        assert full.status_code == 503 and "maximum of 1 episodes" in full.json()["detail"]
        wait_until(lambda: containers(run, sid), 60, "the episode's container started")
        wait_until(lambda: not containers(run, sid), 60, "the idle episode's container removed")
        late = httpx.post(f"{url}/ping", headers={"X-Session-ID": sid})
        assert late.status_code == 410 and "after 3 s without a request" in late.json()["detail"]


@pytest.mark.docker
def test_unknown_tasks_and_episodes_are_one_line_4xx(client, server):
    env = client.environment("egym")
    # A session's errors come back from the client as RuntimeError("(sid=...) <status>, message=<detail>").
    with pytest.raises(RuntimeError) as unknown, env.session(task=spec("acme/product-prize-l0-s0")):
        pass
    assert (
        "404, message=\"unknown task 'acme/product-prize-l0-s0': this server serves 3 tasks; "
        "did you mean 'acme/product-price-l0-s0'?\"" in str(unknown.value)
    )
    out_of_range = "400, message=.index 7 is out of range: split 'train' has 2"
    with pytest.raises(RuntimeError, match=out_of_range), env.session(split="train", index=7):
        pass
    with pytest.raises(aiohttp.ClientResponseError) as bad_split:
        env.list_tasks("validation")
    assert bad_split.value.status == 400
    assert bad_split.value.message == "unknown split 'validation'; the splits are train, val, test"
    nobody = httpx.get(f"{server[0]}/egym/task_tools", headers={"X-Session-ID": "nobody"})
    assert nobody.status_code == 404
    assert nobody.json() == {"detail": "unknown episode 'nobody': open it with POST /create first"}


def test_bad_requests_are_refused_without_docker():
    """The same refusals, in process, before any container could start."""
    server = OrsServer(resolve(TASKS[:1]), run_id="ors-unit")
    with TestClient(server.app()) as http:
        sid = {"X-Session-ID": "e1"}
        refused = {
            "/create": (http.post("/create", headers=sid, json={"task_spec": {"id": "acme/nope"}}), 404),
            "no id": (http.post("/create", headers=sid, json={"task_spec": {}}), 422),
            "both": (
                http.post(
                    "/create", headers=sid, json={"task_spec": {"id": "x"}, "split": "train", "index": 0}
                ),
                422,
            ),
            "no header": (http.post("/create", json={"split": "train", "index": 0}), 400),
            "env": (http.get("/other/splits"), 404),
            "ping": (http.post("/ping", headers=sid), 404),
            "delete": (http.post("/delete", headers=sid), 404),
            "json": (
                http.post("/egym/tasks", content=b"{", headers={"content-type": "application/json"}),
                422,
            ),
        }
        for what, (response, status) in refused.items():
            assert response.status_code == status, (what, response.text)
            detail = response.json()["detail"]
            assert isinstance(detail, str) and detail and "\n" not in detail, what
        assert http.get("/egym/splits").json()[1] == {"name": "val", "type": "validation"}
    assert os.environ.get("DOCKER_HOST", "").startswith("unix:///nonexistent")  # really ran without Docker


def test_results_are_cut_into_events_that_the_client_joins_back_unchanged():
    text = '{"output":"' + "a  b " * 2000 + '"}'
    pieces = list(chunks(text, 4096))
    assert "".join(pieces) == text and all(len(p) <= 4096 and not p.startswith(" ") for p in pieces)


def test_an_incomplete_grade_has_no_reward_not_a_zero():
    (task,) = resolve(TASKS[:1])
    items = [
        ItemResult(id="price", points=2, status="pass", earned=2),
        ItemResult(id="tone", kind="judge", points=2, status="error", error="no judge model"),
    ]
    grade = Grade(task=task.key, earned=2, possible=4, normalized=0.5, incomplete=True, items=items)
    output = graded_output(grade, task, "answered")
    assert output["reward"] is None and output["finished"]
    assert output["metadata"]["incomplete"] is True and output["metadata"]["score"] == 0.5
    assert output["metadata"]["passed"] is None and output["metadata"]["items"][1]["status"] == "error"
    assert "incomplete (1 judge item not graded)" in output["blocks"][0]["text"]


def test_an_unknown_protocol_is_refused_with_the_choices():
    result = CliRunner().invoke(app, ["serve-env", "--protocol", "orz", TASKS[0]])
    assert result.exit_code == 2 and "'orz' is not one of 'ors', 'nemo-gym', 'openenv'" in result.output
