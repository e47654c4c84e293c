"""The agent loop end to end in a real container: oracle replay, limits, errors as observations, faults."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from core.errors import PolicyError
from core.trajectory import AssistantTurn, ToolCall
from gym.harness import FaultConfig, HarnessConfig, run_episode
from gym.mcp_client import server_command
from gym.policies import make_policy
from gym.sandbox import DockerSandbox
from gym.tasks import AgentIdentity, Limits, Task, World

pytestmark = pytest.mark.docker

# A small MCP server started inside the container, standing in for an app wrapper.
DEMO_SERVER = '''
import pathlib
import time
from mcp.server.mcpserver import MCPServer

app = MCPServer("demo")
STORE = pathlib.Path("/tmp/demo-store")

@app.tool()
def save(key: str, value: str) -> str:
    """Store a value under a key."""
    STORE.mkdir(exist_ok=True)
    (STORE / key).write_text(value)
    return f"saved {key}"

@app.tool()
def load(key: str) -> str:
    """Read the value stored under a key."""
    return (STORE / key).read_text()

@app.tool()
def nap(seconds: float) -> str:
    """Block for a while, like an app that hangs."""
    time.sleep(seconds)
    return "woke"

app.run()
'''
DEMO = {"demo": ["python3", "-c", DEMO_SERVER]}

WORLD = World(
    name="w",
    company="Acme Corp",
    date=dt.date(2025, 3, 14),
    description="Acme sells anvils.",
    agent=AgentIdentity(
        name="Dana Reyes", title="Finance Analyst", email="dana@acme.test", chat_username="dana"
    ),
)

SOLUTION = [
    {"tool": "bash", "args": {"command": "mkdir -p reports && cd reports && export TOTAL=$((40 + 2))"}},
    {"tool": "bash", "args": {"command": 'echo "total=$TOTAL" > summary.txt && pwd'}},
    {"tool": "write", "args": {"path": "/workspace/reports/notes.md", "content": "status: pending\n"}},
    {"tool": "edit", "args": {"path": "notes.md", "old_string": "pending", "new_string": "approved"}},
    {"tool": "read", "args": {"path": "notes.md"}},
    {"tool": "demo.save", "args": {"key": "status", "value": "approved"}},
    {"tool": "db.execute", "args": {"sql": "INSERT INTO reports (name, total) VALUES ('q1', 42)"}},
    {"tool": "db.query", "args": {"sql": "SELECT name, total FROM reports"}},
    {"tool": "bash", "args": {"command": "psql -At -c 'SELECT total FROM reports'"}},
    {"tool": "todo", "args": {"items": [{"content": "write the report", "status": "completed"}]}},
    {"answer": "The report is in /workspace/reports."},
]


@pytest.fixture(scope="module")
def loop_sandbox(docker_image):
    sandbox = DockerSandbox.start(docker_image, run_id="pytest-harness-loop")
    setup = sandbox.exec(
        [
            "/usr/lib/postgresql/15/bin/psql",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            "CREATE TABLE reports (name text, total int); GRANT SELECT, INSERT ON reports TO agent",
        ],
        user="postgres",
    )
    assert setup.ok, setup.output
    yield sandbox
    sandbox.close()


def make_task(tmp_path: Path, solution=None, apps=(), **limits) -> Task:
    folder = tmp_path / "report"
    (folder / "solution").mkdir(parents=True, exist_ok=True)
    (folder / "solution" / "actions.yaml").write_text(yaml.safe_dump(solution or SOLUTION))
    return Task(
        id="report",
        title="Write the report",
        world="w",
        prompt="Write the quarterly report.",
        apps=list(apps),
        limits=Limits(**limits),
        path=folder,
    )


class Scripted:
    """A test policy: a function of the conversation."""

    name = "scripted"

    def __init__(self, decide):
        self.decide = decide
        self.seen = []

    async def next(self, messages, tools):
        self.seen.append(messages)
        return (
            await self.decide(messages, tools)
            if asyncio.iscoroutinefunction(self.decide)
            else self.decide(messages, tools)
        )


def bash_turn(command: str, call_id: str = "c") -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))]
    )


async def test_oracle_replays_a_multi_step_task(loop_sandbox, tmp_path):
    task = make_task(tmp_path, apps=["db"])  # the real `db` server, plus the demo server
    policy = make_policy("oracle", task=task)
    servers = {**DEMO, "db": server_command("db")}
    trajectory = await run_episode(loop_sandbox, task, WORLD, policy, HarnessConfig(mcp_servers=servers))

    assert trajectory.error is None, trajectory.meta.get("traceback")
    assert trajectory.stop_reason == "answered" and trajectory.terminated
    assert trajectory.final_answer == "The report is in /workspace/reports."
    assert [c.name for c in trajectory.tool_calls()] == [s["tool"] for s in SOLUTION[:-1]]
    results = [r for step in trajectory.steps for r in step.results]
    assert not any(r.is_error for r in results), [r.output for r in results if r.is_error]
    assert results[1].output == "/workspace/reports"  # the first call's cd carried over
    assert "approved" in results[4].output
    assert loop_sandbox.read_file("/workspace/reports/summary.txt") == b"total=42\n"
    assert loop_sandbox.read_file("/workspace/reports/notes.md") == b"status: approved\n"
    assert loop_sandbox.read_file("/tmp/demo-store/status") == b"approved"
    assert "1 row affected" in results[6].output
    assert "q1" in results[7].output and "42" in results[7].output
    assert results[8].output == "42"
    assert trajectory.meta["todos"] == [{"content": "write the report", "status": "completed"}]
    assert "demo.save" in trajectory.meta["tools"]

    messages = trajectory.messages
    assert [m.role for m in messages[:3]] == ["system", "user", "assistant"]
    assert "Dana Reyes, Finance Analyst at Acme Corp" in messages[0].content
    assert "Friday, 14 March 2025" in messages[0].content
    assert messages[1].content == "Write the quarterly report."
    for step in trajectory.steps:
        assert step.context_tokens and step.context_tokens > 0
    Trajectory = type(trajectory)
    assert Trajectory.model_validate_json(trajectory.model_dump_json()) == trajectory


async def test_turn_limit_truncates(loop_sandbox, tmp_path):
    task = make_task(tmp_path, max_turns=3)
    trajectory = await run_episode(
        loop_sandbox, task, WORLD, Scripted(lambda m, t: bash_turn("true")), HarnessConfig(mcp_servers={})
    )
    assert trajectory.stop_reason == "turn_limit" and trajectory.truncated
    assert len(trajectory.steps) == 3 and trajectory.final_answer is None


async def test_on_step_sees_every_turn_with_its_results_and_cannot_break_the_episode(loop_sandbox, tmp_path):
    task = make_task(tmp_path, max_turns=2)
    seen = []

    def watch(step):
        seen.append((step.index, [r.output.strip() for r in step.results]))
        raise RuntimeError("a broken live view")

    trajectory = await run_episode(
        loop_sandbox,
        task,
        WORLD,
        Scripted(lambda m, t: bash_turn("echo hi")),
        HarnessConfig(mcp_servers={}),
        on_step=watch,
    )
    assert trajectory.stop_reason == "turn_limit" and trajectory.error is None
    assert seen == [(0, ["hi"]), (1, ["hi"])]


async def test_on_step_reports_a_turn_cut_short_by_the_time_limit(loop_sandbox, tmp_path):
    task = make_task(tmp_path, time_limit_s=2, tool_timeout_s=120)
    seen = []
    trajectory = await run_episode(
        loop_sandbox,
        task,
        WORLD,
        Scripted(lambda m, t: bash_turn("sleep 60")),
        HarnessConfig(mcp_servers={}),
        on_step=seen.append,
    )
    assert trajectory.stop_reason == "time_limit"
    assert [s.index for s in seen] == [0] and seen[0].results == []


async def test_time_limit_truncates_a_slow_tool_call(loop_sandbox, tmp_path):
    task = make_task(tmp_path, time_limit_s=2, tool_timeout_s=120)
    trajectory = await run_episode(
        loop_sandbox, task, WORLD, Scripted(lambda m, t: bash_turn("sleep 60")), HarnessConfig(mcp_servers={})
    )
    assert trajectory.stop_reason == "time_limit" and trajectory.truncated
    assert trajectory.error is None


async def test_time_limit_truncates_a_slow_policy(loop_sandbox, tmp_path):
    async def slow(messages, tools):
        await asyncio.sleep(60)

    task = make_task(tmp_path, time_limit_s=1)
    trajectory = await run_episode(loop_sandbox, task, WORLD, Scripted(slow), HarnessConfig(mcp_servers={}))
    assert trajectory.stop_reason == "time_limit"


async def test_a_hung_command_times_out_and_the_loop_carries_on(loop_sandbox, tmp_path):
    def decide(messages, tools):
        turns = sum(m.role == "assistant" for m in messages)
        return [bash_turn("sleep 600"), bash_turn("echo still-here"), AssistantTurn(content="ok")][turns]

    task = make_task(tmp_path, tool_timeout_s=1)
    trajectory = await run_episode(loop_sandbox, task, WORLD, Scripted(decide), HarnessConfig(mcp_servers={}))
    assert trajectory.stop_reason == "answered"
    first, second = (step.results[0] for step in trajectory.steps[:2])
    assert first.is_error and "timed out after 1s" in first.output
    assert second.output == "still-here"


async def test_a_policy_exception_ends_the_episode_with_an_error(loop_sandbox, tmp_path):
    def broken(messages, tools):
        raise PolicyError("endpoint http://x/v1 answered 503; check the server")

    trajectory = await run_episode(
        loop_sandbox, make_task(tmp_path), WORLD, Scripted(broken), HarnessConfig(mcp_servers={})
    )
    assert trajectory.stop_reason == "error"
    assert trajectory.error == "PolicyError: endpoint http://x/v1 answered 503; check the server"


async def test_a_server_that_does_not_start_is_an_episode_error(loop_sandbox, tmp_path):
    config = HarnessConfig(mcp_servers={"ghost": ["python3", "-c", "raise SystemExit(3)"]})
    trajectory = await run_episode(loop_sandbox, make_task(tmp_path), WORLD, make_policy("null"), config)
    assert trajectory.stop_reason == "error" and "MCP server 'ghost'" in trajectory.error


async def test_malformed_arguments_come_back_to_the_model(loop_sandbox, tmp_path):
    def decide(messages, tools):
        if messages[-1].role == "user":
            return AssistantTurn(tool_calls=[ToolCall(id="bad", name="bash", arguments='{"command": ')])
        return AssistantTurn(content=f"saw: {messages[-1].content}")

    trajectory = await run_episode(
        loop_sandbox, make_task(tmp_path), WORLD, Scripted(decide), HarnessConfig(mcp_servers={})
    )
    assert trajectory.stop_reason == "answered"
    assert "not valid JSON" in trajectory.final_answer
    assert trajectory.messages[-2].role == "tool" and trajectory.messages[-2].tool_call_id == "bad"


async def test_null_policy_answers_at_once(loop_sandbox, tmp_path):
    trajectory = await run_episode(
        loop_sandbox, make_task(tmp_path), WORLD, make_policy("null"), HarnessConfig(mcp_servers={})
    )
    assert trajectory.stop_reason == "answered" and trajectory.final_answer == "done"
    assert len(trajectory.steps) == 1 and not trajectory.tool_calls()


async def test_injected_faults_are_seeded_and_recorded(loop_sandbox, tmp_path):
    saves = [{"tool": "demo.save", "args": {"key": f"k{i}", "value": str(i)}} for i in range(12)]
    task = make_task(tmp_path, solution=[*saves, {"answer": "saved"}])

    async def run(seed: int):
        loop_sandbox.exec("rm -rf /tmp/demo-store")
        config = HarnessConfig(mcp_servers=DEMO, faults=FaultConfig(rate=0.5, seed=seed))
        trajectory = await run_episode(loop_sandbox, task, WORLD, make_policy("oracle", task=task), config)
        stored = loop_sandbox.exec("ls /tmp/demo-store").output.split()
        return trajectory, stored

    first, stored = await run(seed=7)
    again, _ = await run(seed=7)
    other, _ = await run(seed=8)
    results = [r for step in first.steps for r in step.results]
    faulted = [r for r in results if r.fault]
    assert 0 < len(faulted) < 12
    assert first.faults() == again.faults() and first.faults() != other.faults()
    assert {r.fault for r in faulted} == {"demo.unavailable"}
    assert all(r.is_error for r in faulted)
    # a faulted call never reached the app
    assert sorted(stored) == sorted(f"k{i}" for i, r in enumerate(results) if not r.fault)


async def test_the_loop_compacts_the_context_and_records_tokens(loop_sandbox, tmp_path):
    def decide(messages, tools):
        turn = len(policy.seen)
        return bash_turn("seq 100000 103000", f"c{turn}") if turn <= 6 else AssistantTurn(content="finished")

    policy = Scripted(decide)
    config = HarnessConfig(
        mcp_servers={}, context={"window": 7000, "reserve_tokens": 1000, "keep_recent_turns": 2}
    )
    trajectory = await run_episode(loop_sandbox, make_task(tmp_path), WORLD, policy, config)

    assert trajectory.stop_reason == "answered", trajectory.error
    assert any(step.compacted for step in trajectory.steps)
    assert all(step.context_tokens <= 6000 for step in trajectory.steps)
    outputs = [m.content for m in trajectory.messages if m.role == "tool"]
    assert len(outputs) >= 4 and all(o.endswith("103000") for o in outputs)  # the transcript stays complete
    last_context = policy.seen[-1]
    assert last_context[1].content == "Write the quarterly report."
    assert any("context window" in m.content for m in last_context)


async def test_a_window_too_small_for_the_task_ends_as_context_limit(loop_sandbox, tmp_path):
    config = HarnessConfig(mcp_servers={}, context={"window": 600, "reserve_tokens": 100})
    trajectory = await run_episode(loop_sandbox, make_task(tmp_path), WORLD, make_policy("null"), config)
    assert trajectory.stop_reason == "context_limit" and trajectory.truncated
    assert "budget 500" in trajectory.error


async def test_a_hung_mcp_call_times_out_and_the_server_keeps_answering(loop_sandbox, tmp_path):
    steps = [
        {"tool": "demo.nap", "args": {"seconds": 30}},
        {"tool": "demo.save", "args": {"key": "k", "value": "v"}},
        {"answer": "ok"},
    ]
    task = make_task(tmp_path, solution=steps, tool_timeout_s=1)
    trajectory = await run_episode(
        loop_sandbox, task, WORLD, make_policy("oracle", task=task), HarnessConfig(mcp_servers=DEMO)
    )
    assert trajectory.stop_reason == "answered", trajectory.error
    hung, saved = (step.results[0] for step in trajectory.steps[:2])
    assert hung.is_error and "timed out" in hung.output
    assert saved.output == "saved k" and not saved.is_error


async def test_the_time_limit_during_an_mcp_call_is_a_clean_truncation(loop_sandbox, tmp_path):
    steps = [{"tool": "demo.nap", "args": {"seconds": 30}}, {"answer": "ok"}]
    task = make_task(tmp_path, solution=steps, time_limit_s=1.5, tool_timeout_s=60)
    trajectory = await run_episode(
        loop_sandbox, task, WORLD, make_policy("oracle", task=task), HarnessConfig(mcp_servers=DEMO)
    )
    assert trajectory.stop_reason == "time_limit" and trajectory.error is None
    assert "shutdown_error" not in trajectory.meta, trajectory.meta.get("traceback")


async def test_the_task_apps_choose_the_mcp_servers(loop_sandbox, tmp_path):
    task = make_task(tmp_path, apps=["db"])
    trajectory = await run_episode(loop_sandbox, task, WORLD, make_policy("null"))
    assert trajectory.stop_reason == "answered", trajectory.error
    assert {"db.query", "db.execute", "bash", "edit"} <= set(trajectory.meta["tools"])
    assert "Company database (PostgreSQL" in trajectory.messages[0].content
