"""The policy registry, and the oracle's solution files."""

from __future__ import annotations

import json

import pytest

from core.errors import PolicyError, TaskError
from core.trajectory import Message, ToolCall
from gym.policies import Policy, make_policy, policy_names
from gym.policies.oracle import OraclePolicy, load_solution
from gym.tasks import Task

TOOLS = [
    {"type": "function", "function": {"name": name, "description": "", "parameters": {}}}
    for name in ("bash", "chat.post_message")
]


def test_known_names_and_lazy_import():
    assert {"openai", "hf", "vllm", "oracle", "null"} <= set(policy_names())
    assert isinstance(make_policy("null"), Policy)


def test_unknown_name_suggests_the_closest():
    with pytest.raises(PolicyError, match="did you mean 'oracle'"):
        make_policy("oracel")


def test_entry_points_and_bad_options():
    assert make_policy("gym.policies.null:NullPolicy", answer="bye").answer == "bye"
    with pytest.raises(PolicyError, match="has no attribute 'Nope'"):
        make_policy("gym.policies.null:Nope")
    with pytest.raises(PolicyError, match="bad options"):
        make_policy("null", temperature=0.3)


def test_vllm_is_only_imported_when_used():
    with pytest.raises(PolicyError, match="vllm policy needs vLLM on a GPU node.*use the hf policy"):
        make_policy("vllm", model="Qwen/Qwen2.5-0.5B-Instruct")


def test_per_task_policies_need_the_task_and_others_ignore_it(tmp_path):
    with pytest.raises(PolicyError, match="pass task="):
        make_policy("oracle")
    task = Task(id="t", title="t", world="w", prompt="p", path=tmp_path)
    assert make_policy("null", task=task).answer == "done"


def solution_file(tmp_path, text: str) -> Task:
    (tmp_path / "solution").mkdir(exist_ok=True)
    (tmp_path / "solution" / "actions.yaml").write_text(text)
    return Task(id="t", title="t", world="w", prompt="p", path=tmp_path)


async def test_oracle_steps_through_the_solution_statelessly(tmp_path):
    task = solution_file(
        tmp_path,
        "- tool: bash\n  args: {command: ls}\n"
        "- tool: chat.post_message\n  args: {channel: general, message: hi}\n"
        "- answer: All done.\n",
    )
    oracle = make_policy("oracle", task=task)
    history = [Message(role="system", content="s"), Message(role="user", content="p")]
    first = await oracle.next(history, TOOLS)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("oracle-0", "bash", {"command": "ls"})
    ]
    history += [first.message(), Message(role="tool", tool_call_id="oracle-0", content="x")]
    second = await oracle.next(history, TOOLS)
    assert second.tool_calls[0].name == "chat.post_message"
    history += [second.message(), Message(role="tool", tool_call_id="oracle-1", content="ok")]
    third = await oracle.next(history, TOOLS)
    assert third.content == "All done." and not third.tool_calls
    # a fresh conversation starts over: one instance serves many episodes
    assert (await oracle.next(history[:2], TOOLS)).tool_calls[0].id == "oracle-0"


async def test_oracle_names_a_tool_the_episode_does_not_offer(tmp_path):
    oracle = OraclePolicy(solution_file(tmp_path, "- tool: db.query\n  args: {sql: select 1}\n"))
    with pytest.raises(PolicyError, match="step 0 calls 'db.query'.*offered: bash, chat.post_message"):
        await oracle.next([Message(role="user", content="p")], TOOLS)


async def test_strict_oracle_stops_at_a_failed_step(tmp_path):
    oracle = OraclePolicy(
        solution_file(tmp_path, "- tool: bash\n  args: {command: nope}\n- answer: ok\n"), strict=True
    )
    call = ToolCall(id="oracle-0", name="bash", arguments="{}")
    history = [
        Message(role="user", content="p"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id="oracle-0", content="Error: command failed"),
    ]
    with pytest.raises(PolicyError, match="solution step 0 failed: Error: command failed"):
        await oracle.next(history, TOOLS)


def test_bad_solution_files_name_the_step(tmp_path):
    with pytest.raises(TaskError, match="step 1"):
        load_solution(solution_file(tmp_path, "- answer: ok\n- tol: bash\n").path / "solution/actions.yaml")
    with pytest.raises(TaskError, match="reference solution not found"):
        load_solution(tmp_path / "missing.yaml")
