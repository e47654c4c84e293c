"""The Open Reward Standard's payloads, as the official client and server (`ors-sdk`) exchange them.

Request bodies are strict models (a typo is a 422 naming the field); responses are
plain JSON: task specs, tool specs, tool outputs, and the server-sent events a tool
call answers with. gym/interop/ors.py serves them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError, model_validator
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from core.strict import StrictModel
from core.trajectory import ToolResult
from core.validation import describe_validation_error
from grader.grade import Grade
from gym.interop.episodes import InteropError
from gym.rollout import passed
from gym.tasks import Task

SPLIT_TYPES = {"train": "train", "val": "validation", "test": "test"}  # egym split -> ORS split type
SSE_CHUNK = 4096  # the official server's chunk size; the client joins `chunk` events up to `end`
SUBMIT_TOOL: dict[str, Any] = {
    "name": "submit",
    "description": "Finish the task with your final answer (what you would reply to the person who asked). "
    "The episode ends and is graded; the reward comes back. No tool can be called after it.",
    "input_schema": {
        "type": "object",
        "properties": {"answer": {"type": "string", "description": "Your final answer."}},
        "required": ["answer"],
        "additionalProperties": False,
    },
}
ITEM_FIELDS = {"id", "description", "section", "kind", "points", "status", "earned", "evidence", "error"}
B = TypeVar("B", bound=BaseModel)


class SplitBody(StrictModel):
    split: str


class IndexBody(SplitBody):
    index: int


class RangeBody(SplitBody):
    start: int | None = None
    stop: int | None = None


class CreateBody(StrictModel):
    """A task by its spec (as listed) or by split and index; secrets are accepted and unused."""

    env_name: str | None = None
    task_spec: dict[str, Any] | None = None
    split: str | None = None
    index: int | None = None
    secrets: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_task(self) -> CreateBody:
        if (self.task_spec is None) == (self.split is None or self.index is None):
            raise ValueError("give either task_spec or both split and index")
        return self


class CallBody(StrictModel):
    name: str
    input: dict[str, Any]
    task_id: str | None = None  # a client reconnecting to a call it started


class SubmitArgs(StrictModel):
    answer: str


async def parse(request: Request, model: type[B]) -> B:
    """The request's JSON body as `model`; a 422 with one line when it is not."""
    try:
        return model.model_validate(await request.json())
    except ValueError as exc:  # ValidationError is one: bad JSON and bad fields both become one line
        problem = (
            describe_validation_error(exc, model=model) if isinstance(exc, ValidationError) else str(exc)
        )
        raise HTTPException(422, f"{request.url.path}: {problem}") from None


async def error_response(_request: Request, exc: Exception) -> Response:
    """Errors as the official server sends them: JSON with a one-line `detail`."""
    if isinstance(exc, InteropError):
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)
    assert isinstance(exc, HTTPException)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)


def task_spec(task: Task) -> dict[str, Any]:
    return {
        "id": task.key,
        "title": task.title,
        "split": task.split,
        "apps": list(task.apps),
        "tags": task.tags,
    }


def tool_spec(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-format tool schema (the harness's) as an ORS ToolSpec."""
    function = schema["function"]
    return {
        "name": function["name"],
        "description": function["description"],
        "input_schema": function["parameters"],
    }


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "detail": None}


def tool_output(result: ToolResult, turns_left: int) -> dict[str, Any]:
    """A tool's result as it is (errors included: the agent reads them, as in the harness)."""
    meta = {"is_error": result.is_error, "seconds": result.seconds, "fault": result.fault}
    return {
        "blocks": [text_block(result.output)],
        "metadata": {**meta, "turns_left": turns_left},
        "reward": None,
        "finished": False,
    }


def graded_output(grade: Grade, task: Task, stop_reason: str | None) -> dict[str, Any]:
    """submit's output: the reward, and the grade's facts as metadata."""
    metadata = {
        "task": grade.task,
        "score": grade.normalized,
        "earned": grade.earned,
        "possible": grade.possible,
        "raw_score": grade.raw_normalized,
        "incomplete": grade.incomplete,
        "gated": grade.gated,
        "passed": passed(grade, task.pass_threshold),
        "stop_reason": stop_reason,
        "items": [item.model_dump(include=ITEM_FIELDS) for item in grade.items],
    }
    note = f" {grade.incomplete_note()}: no reward is given for it." if grade.incomplete else ""
    return {
        "blocks": [text_block(f"Graded: {grade.summary()}.{note}")],
        "metadata": metadata,
        "reward": None if grade.incomplete else grade.normalized,  # an incomplete grade is never a 0
        "finished": True,
    }


def run_tool_output(output: dict[str, Any] | None = None, *, error: str | None = None) -> str:
    """A RunToolOutput as one line of JSON: ok with the output, or the protocol's tool error."""
    value = {"ok": False, "error": error} if error is not None else {"ok": True, "output": output}
    return json.dumps(value, separators=(",", ":"))  # no spaces between tokens (see `chunks`)


async def call_events(call_id: str, call: asyncio.Task[str]) -> AsyncIterator[dict[str, str]]:
    """The official server's events for a call: task_id, then its result as chunk... end, or error."""
    yield {"event": "task_id", "data": call_id}
    await asyncio.wait({call})  # a client that disconnects cancels this wait, not the call
    if call.cancelled():
        yield {"event": "error", "data": "the call was cancelled: the episode was closed"}
        return
    if (exc := call.exception()) is not None:
        yield {"event": "error", "data": f"{type(exc).__name__}: {exc}".replace("\n", " ")}
        return
    pieces = list(chunks(call.result(), SSE_CHUNK))
    for index, piece in enumerate(pieces):
        yield {"event": "end" if index == len(pieces) - 1 else "chunk", "data": piece}


def chunks(text: str, size: int) -> Iterator[str]:
    """Pieces of at most `size`; none starts with a space, which the client strips after `data:`."""
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        while end < len(text) and end > start + 1 and text[end] == " ":
            end -= 1
        yield text[start:end]
        start = end
