"""OpenEnv's payloads, as `openenv-core` 0.3.0's clients send and read them.

Messages on the WebSocket `/ws` are `{"type": "reset"|"step"|"state"|"close"|"mcp", "data": ...}`;
answers are `{"type": "observation", "data": {"observation": {...}, "reward", "done"}}`, `state`,
`mcp` (a JSON-RPC response) or `error` (`{"message", "code"}`: the client raises it as
RuntimeError). An action is one of OpenEnv's MCP actions: `{"type": "list_tools"}` or
`{"type": "call_tool", "tool_name", "arguments"}`; the final answer is the tool `submit`.
The observation shapes are those OpenEnv's MCPToolClient parses (`tools`; `tool_name`,
`result`, `error`), with `metadata` inside the observation, where the clients read it.
gym/interop/openenv.py serves them.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from core.strict import StrictModel
from core.trajectory import Message, ToolResult
from core.validation import describe_validation_error
from grader.grade import Grade
from gym.interop.episodes import EpisodeFailed, EpisodeGone, InteropError, ServerFull, UnknownEpisode
from gym.interop.ors_wire import SUBMIT_TOOL, graded_output, task_spec, tool_spec
from gym.tasks import Task

LIMIT_STOPS = ("turn_limit", "time_limit", "context_limit")  # truncated, in Gymnasium's words


class ResetBody(StrictModel):
    """reset()'s keyword arguments: a task by key, or by split and index (or seed); none: a random train task."""

    task: str | None = Field(
        None, description="A task key as `egym tasks list` shows it: acme/product-price-l0-s3"
    )
    split: str | None = Field(
        None, description="train, val or test (default train for seed or a random pick)"
    )
    index: int | None = Field(None, ge=0, description="The task at this index of the split")
    seed: int | None = Field(
        None, ge=0, description="Picks split[seed % len(split)]: the same seed, the same task"
    )
    episode_id: str | None = Field(None, min_length=1, max_length=255)


class ListToolsAction(StrictModel):
    type: Literal["list_tools"] = "list_tools"
    metadata: dict[str, Any] = Field(default_factory=dict)


class CallToolAction(StrictModel):
    type: Literal["call_tool"] = "call_tool"
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Action(BaseModel):
    """What step() takes: OpenEnv's MCP actions, told apart by `type`."""

    action: ListToolsAction | CallToolAction = Field(discriminator="type")


class StepBody(StrictModel):
    """POST /step: OpenEnv's StepRequest plus the episode it is for (HTTP has no connection to hold it)."""

    action: dict[str, Any]
    episode_id: str = Field(min_length=1)
    timeout_s: float | None = None
    request_id: str | None = None


class SubmitArgs(StrictModel):
    answer: str


class WireError(InteropError):
    """A message that is not OpenEnv's; `code` is OpenEnv's WSErrorCode."""

    def __init__(self, message: str, code: str = "VALIDATION_ERROR", status: int = 422) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def validated(model: type[BaseModel], data: Any, where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise WireError(describe_validation_error(exc, where=where, model=model)) from None


def action_of(data: Any) -> ListToolsAction | CallToolAction:
    if not isinstance(data, dict) or data.get("type") not in ("list_tools", "call_tool"):
        raise WireError(
            "an action is {'type': 'call_tool', 'tool_name': ..., 'arguments': {...}} or {'type': 'list_tools'}"
        )
    return validated(Action, {"action": data}, "step").action


def message_of(raw: str) -> tuple[str, Any]:
    """A WebSocket message's type and data; WireError when it is not JSON or not OpenEnv's."""
    try:
        message = json.loads(raw)
    except ValueError as exc:
        raise WireError(f"invalid JSON: {exc}", "INVALID_JSON", 400) from None
    if not isinstance(message, dict):
        raise WireError("a message is a JSON object with a 'type'", "INVALID_JSON", 400)
    kind = message.get("type")
    if kind not in ("reset", "step", "state", "close", "mcp"):
        raise WireError(
            f"unknown message type {kind!r}: reset, step, state, close or mcp", "UNKNOWN_TYPE", 400
        )
    return kind, message.get("data", {})


def error_code(exc: InteropError) -> str:
    """OpenEnv's WSErrorCode for an egym refusal."""
    if isinstance(exc, WireError):
        return exc.code
    if isinstance(exc, ServerFull):
        return "CAPACITY_REACHED"
    if isinstance(exc, EpisodeFailed):
        return "FACTORY_ERROR"
    if isinstance(exc, (EpisodeGone, UnknownEpisode)):
        return "SESSION_ERROR"
    return "VALIDATION_ERROR" if exc.status in (400, 404, 409, 422) else "EXECUTION_ERROR"


def ws_error(message: str, code: str, status: int) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message.replace("\n", " "), "code": code, "status": status}}


def step_result(
    observation: dict[str, Any], reward: float | None = None, done: bool = False
) -> dict[str, Any]:
    return {"observation": observation, "reward": reward, "done": done}


def tool_list(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The harness's OpenAI-format schemas as OpenEnv Tools (name, description, input_schema), then submit."""
    return [*map(tool_spec, tools), SUBMIT_TOOL]


def reset_observation(
    episode_id: str, task: Task, messages: list[Message], tools: list[dict[str, Any]], turns_left: int
) -> dict[str, Any]:
    """The first observation: the prompt (system prompt, then the task) and the tools.

    The prompt is in `metadata` too: OpenEnv's MCPToolClient keeps only the tools and the metadata.
    """
    prompt = "\n\n".join(m.content for m in messages)
    metadata = {"episode_id": episode_id, "task_id": task.key, "turns_left": turns_left, "prompt": prompt}
    return step_result(
        {
            "prompt": prompt,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "task": task_spec(task),
            "tools": tool_list(tools),
            "metadata": metadata,
        }
    )


def tools_observation(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return step_result({"tools": tool_list(tools), "metadata": {}})


def call_result(text: str, data: Any, is_error: bool) -> dict[str, Any]:
    """A tools/call result as FastMCP's CallToolResult serialises (MCPToolClient.call_tool returns `data`)."""
    return {
        "content": [{"type": "text", "text": text}],
        "structured_content": None,
        "meta": None,
        "data": data,
        "is_error": is_error,
    }


def tool_observation(name: str, result: ToolResult, turns_left: int) -> dict[str, Any]:
    """A tool's result as it is (errors included: the agent reads them, as in the harness)."""
    metadata = {"is_error": result.is_error, "seconds": result.seconds, "fault": result.fault}
    return step_result(
        {
            "tool_name": name,
            "result": call_result(result.output, result.output, result.is_error),
            "error": None,
            "metadata": {**metadata, "turns_left": turns_left},
        }
    )


def tool_refused(name: str, error_type: str, message: str) -> dict[str, Any]:
    """A call that was not run (OpenEnv's ToolError; MCPToolClient.call_tool raises it)."""
    return step_result(
        {
            "tool_name": name,
            "result": None,
            "error": {"error_type": error_type, "message": message},
            "metadata": {},
        }
    )


def graded(observation: dict[str, Any], grade: Grade, task: Task, stop_reason: str | None) -> dict[str, Any]:
    """The last observation: done, the reward, and the grade's facts in `metadata`.

    OpenEnv has one `done`; `terminated` (the agent submitted) and `truncated` (a limit
    ended it) keep Gymnasium's two apart. An incomplete grade has reward None, never 0.
    """
    ors = graded_output(grade, task, stop_reason)
    facts = {
        **ors["metadata"],
        "reward": ors["reward"],
        "summary": ors["blocks"][0]["text"],
        "terminated": stop_reason == "answered",
        "truncated": stop_reason != "answered",
    }
    observation = {**observation, "metadata": {**observation.get("metadata", {}), **facts}}
    if observation.get("tool_name") == SUBMIT_TOOL["name"]:
        observation["result"] = call_result(facts["summary"], facts, False)
    return step_result(observation, ors["reward"], True)


def submit_observation() -> dict[str, Any]:
    return {"tool_name": SUBMIT_TOOL["name"], "result": None, "error": None, "metadata": {}}


def state(episode_id: str | None, step_count: int, **facts: Any) -> dict[str, Any]:
    """OpenEnv's State (episode_id, step_count) with egym's facts beside them (State allows extra keys)."""
    return {"episode_id": episode_id, "step_count": step_count, **facts}


def schemas() -> dict[str, Any]:
    """GET /schema: the action, observation and state JSON schemas."""
    observation = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string"},
            "tools": {"type": "array"},
            "tool_name": {"type": "string"},
            "result": {},
            "error": {"type": ["object", "null"]},
            "metadata": {"type": "object"},
        },
    }
    state_schema = {
        "type": "object",
        "properties": {"episode_id": {"type": ["string", "null"]}, "step_count": {"type": "integer"}},
        "additionalProperties": True,
    }
    return {"action": Action.model_json_schema(), "observation": observation, "state": state_schema}


# -- MCP JSON-RPC (the `mcp` message on /ws, and POST /mcp) ---------------------------------------

RPC_INVALID_REQUEST, RPC_NO_METHOD, RPC_INVALID_PARAMS, RPC_SERVER_ERROR = -32600, -32601, -32602, -32000


class RpcRequest(StrictModel):
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    id: str | int | None = None


class RpcFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def rpc_result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message.replace("\n", " ")},
    }


def mcp_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tools as MCP's tools/list has them (`inputSchema`)."""
    return [
        {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
        for t in tool_list(tools)
    ]
