"""NeMo Gym's payloads for a resources server, as its agents (`simple_agent`) send and read them.

A NeMo Gym dataset row is `{"responses_create_params": {...}, ...}` (an OpenAI Responses
API request plus the row's own fields); `/seed_session` gets the row, `/verify` gets the row
plus the agent's `response` and answers with the same body plus `reward`. Tool calls are
`POST /<function name>` with the arguments as the body; the answer's text is the tool output.
Function names allow no '.', so egym's `db.query` is the function (and endpoint) `db__query`:
'.' <-> '__', reversible because no egym tool name holds '__'. gym/interop/nemo_gym.py serves them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.trajectory import Message
from grader.grade import Grade
from gym.interop.ors_wire import graded_output
from gym.tasks import Task

INCOMPLETE_STATUS = 503  # verify's answer to an incomplete grade: no number a trainer would learn from
SEP = "__"  # stands for '.' in function names: `db.query` <-> `db__query`
TASK_INDEX = "_ng_task_index"  # NeMo Gym's row index in aggregate_metrics requests


class _Row(BaseModel):
    """A row's fields egym reads; the rest (agent_ref, NeMo Gym's indices...) is kept as sent."""

    model_config = ConfigDict(extra="allow")


class SeedBody(_Row):
    egym_task: str  # the task key, e.g. acme/product-price-l0-s3 (as GET /rows lists it)


class VerifyBody(_Row):
    responses_create_params: dict[str, Any]
    response: dict[str, Any]  # the agent's Responses API response: its last assistant message is the answer
    egym_task: str | None = None


class AggregateBody(BaseModel):
    verify_responses: list[dict[str, Any]]


def function_name(tool: str) -> str:
    """egym's tool name as a Responses API function name (and endpoint): `db.query` -> `db__query`."""
    if SEP in tool:
        raise ValueError(f"tool {tool!r} holds {SEP!r}: its function name would not map back")
    return tool.replace(".", SEP)


def tool_name(function: str) -> str:
    """The egym tool a function name (an endpoint's path) stands for: `db__query` -> `db.query`."""
    return function.replace(SEP, ".")


def function_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat-format tool schema (the harness's) as a Responses API function tool."""
    function = schema["function"]
    return {
        "type": "function",
        "name": function_name(function["name"]),
        "description": function["description"],
        "parameters": function["parameters"],
        "strict": False,  # egym's schemas have optional arguments, which strict mode forbids
    }


def row(
    task: Task, messages: list[Message], tools: list[dict[str, Any]], agent: str | None
) -> dict[str, Any]:
    """The task as a NeMo Gym dataset row: the harness's system prompt and task, the episode's tools."""
    params = {
        "input": [{"role": m.role, "content": m.content} for m in messages],
        "tools": [function_tool(schema) for schema in tools],
    }
    agent_ref = {"agent_ref": {"type": "responses_api_agents", "name": agent}} if agent else {}
    return {"responses_create_params": params, "egym_task": task.key, "egym_split": task.split, **agent_ref}


def final_answer(response: dict[str, Any]) -> str:
    """The text of the response's last assistant message ("" when it has none: the grade says so)."""
    for item in reversed(response.get("output") or []):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "assistant":
            content = item.get("content")
            if isinstance(content, str):
                return content
            parts = [p.get("text", "") for p in content or [] if isinstance(p, dict)]
            return "".join(p for p in parts if isinstance(p, str))
    return ""


def verify_answer(grade: Grade, task: Task, stop_reason: str | None) -> tuple[int, dict[str, Any]]:
    """Verify's status and what its body gets: `reward` and `egym_grade`, or for an incomplete grade a 503.

    NeMo Gym's verify response must hold a number; an incomplete grade has none to give
    (its ungraded items would read as failed), so it is refused with the points and items.
    """
    metadata = graded_output(grade, task, stop_reason)["metadata"]  # the same facts as ORS's submit
    if grade.incomplete:
        detail = f"{grade.task}: the grade is {grade.incomplete_note()} ({grade}): no reward is given for it"
        return INCOMPLETE_STATUS, {"detail": detail, "egym_grade": metadata}
    return 200, {"reward": grade.normalized, "egym_grade": metadata}


def aggregate_metrics(verify_responses: list[dict[str, Any]]) -> dict[str, Any]:
    """NeMo Gym's AggregateMetrics over verify responses: reward and pass rate, per row and overall."""
    by_row: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for response in verify_responses:
        by_row[response.get(TASK_INDEX, 0)].append(response)

    def stats(responses: list[dict[str, Any]]) -> dict[str, Any]:
        rewards = [float(r["reward"]) for r in responses if isinstance(r.get("reward"), (int, float))]
        passed = [
            bool(g["passed"]) for r in responses if (g := r.get("egym_grade")) and g.get("passed") is not None
        ]
        out: dict[str, Any] = {"num_rollouts": len(responses)}
        if rewards:
            out |= {"mean/reward": statistics.fmean(rewards), "max/reward": max(rewards)}
            out |= {"min/reward": min(rewards), "std/reward": statistics.pstdev(rewards)}
        if passed:
            out["mean/passed"] = statistics.fmean(passed)
        return out

    overall = stats(verify_responses) if verify_responses else {}
    return {
        "group_level_metrics": [{TASK_INDEX: index, **stats(by_row[index])} for index in sorted(by_row)],
        "agent_metrics": overall,
        "key_metrics": {k: v for k, v in overall.items() if k.startswith("mean/")},
    }
