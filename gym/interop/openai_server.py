"""An OpenAI-compatible chat endpoint over egym's in-process engine: `egym models serve`.

    POST /v1/chat/completions   messages (tool results included), tools, temperature, top_p,
                                max_tokens, seed, n=1, stream
    GET  /v1/models

So clients that only speak OpenAI's protocol (verifiers' `vf-eval`, other trainers'
evaluators) can run a local model. Each request is one turn of the `hf` policy: the same
chat rendering (tools listed in the system prompt when the template cannot show them),
the same stop strings and the same tool-call parser, so a model behaves here exactly as
in an egym rollout; the parsed calls come back as OpenAI `tool_calls`. Concurrent
requests share the model's engine, which batches them.

Unknown request fields are ignored, as OpenAI-compatible servers do (clients send many);
what would change the answer and is not supported (n > 1, naming the tool to call) is a 400.
tool_choice "required" decodes every call under its JSON grammar, as the hf policy does.
With `stream`, the finished completion is sent as chat.completion.chunk events.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.trajectory import AssistantTurn, Message, ToolCall
from core.validation import describe_validation_error
from gym.policies.hf import HFPolicy


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ChatRequest(_Lenient):
    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Literal["auto", "none", "required"] | None = None
    temperature: float | None = Field(None, ge=0, le=5)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    n: Literal[1] = 1
    stream: bool = False
    stream_options: dict[str, Any] | None = None


class OpenAIServer:
    """The chat endpoint for one model; `app()` is the ASGI application.

    `model`: what `hf` takes (a bundled name, a folder, an Engine); `name` is the model id
    clients ask for (the engine's path is accepted too).
    """

    def __init__(self, model: Any, *, name: str, max_tokens: int = 512, device: str | None = None) -> None:
        # loads the shared engine once (on `device`, by default the GPU if any); requests copy its settings
        self.base = HFPolicy(model, device=device)
        self.name, self.max_tokens = name, max_tokens

    def app(self) -> Starlette:
        routes = [
            Route("/v1/models", self.models),
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
        ]
        return Starlette(routes=routes, exception_handlers={HTTPException: _error})

    async def models(self, _request: Request) -> Response:
        card = {"id": self.name, "object": "model", "created": 0, "owned_by": "egym"}
        return JSONResponse({"object": "list", "data": [card]})

    async def chat(self, request: Request) -> Response:
        body = await _parse(request)
        if body.model not in (self.name, self.base.model):
            raise HTTPException(
                404, f"model {body.model!r} is not served here; this server has {self.name!r}"
            )
        tools = [] if body.tool_choice == "none" else list(body.tools or [])
        turn = await self._policy(body).next(to_messages(body.messages), tools)
        completion = completion_body(turn, self.name)
        if not body.stream:
            return JSONResponse(completion)
        usage = bool((body.stream_options or {}).get("include_usage"))
        return EventSourceResponse(_chunks(completion, usage))

    def _policy(self, body: ChatRequest) -> HFPolicy:
        """The hf policy for this request's sampling settings, on the shared engine."""
        base = self.base.sampling
        return HFPolicy(
            self.base.engine,
            temperature=body.temperature if body.temperature is not None else base.temperature,
            top_p=body.top_p if body.top_p is not None else base.top_p,
            max_new_tokens=body.max_completion_tokens or body.max_tokens or self.max_tokens,
            seed=body.seed,
            tool_choice="required" if body.tool_choice == "required" else "auto",
        )


def to_messages(raw: list[dict[str, Any]]) -> list[Message]:
    """OpenAI chat messages as egym's (text parts joined; a tool result named after its call)."""
    names: dict[str, str] = {}
    out = []
    for index, item in enumerate(raw):
        role = "system" if item.get("role") == "developer" else item.get("role")
        calls = [
            ToolCall(
                id=call.get("id") or f"call_{index}_{n}",
                name=call.get("function", {}).get("name", ""),
                arguments=call.get("function", {}).get("arguments") or "{}",
            )
            for n, call in enumerate(item.get("tool_calls") or [])
        ]
        names.update((call.id, call.name) for call in calls)
        call_id = item.get("tool_call_id")
        try:
            out.append(
                Message(
                    role=role,
                    content=_text(item.get("content")),
                    tool_calls=calls,
                    tool_call_id=call_id if role == "tool" else None,
                    name=(item.get("name") or names.get(call_id or "", "tool")) if role == "tool" else None,
                )
            )
        except ValidationError as exc:
            problem = describe_validation_error(exc, where=f"messages[{index}]", model=Message)
            raise HTTPException(400, problem) from None
    return out


def completion_body(turn: AssistantTurn, model: str) -> dict[str, Any]:
    """A chat.completion for the policy's turn."""
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in turn.tool_calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": turn.content or None}
    if calls:
        message["tool_calls"] = calls
    reason = "tool_calls" if calls else "length" if turn.finish_reason in ("length", "cancelled") else "stop"
    prompt, written = turn.prompt_tokens or 0, turn.completion_tokens or 0
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": written, "total_tokens": prompt + written},
    }


async def _chunks(completion: dict[str, Any], usage: bool) -> AsyncIterator[str]:
    """The completion as a stream: the message in one delta, the finish reason, usage, [DONE]."""
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
    for item in (
        {"index": 0, "delta": delta, "finish_reason": None},
        {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]},
    ):
        yield json.dumps(head | {"choices": [item]})
    if usage:
        yield json.dumps(head | {"choices": [], "usage": completion["usage"]})
    yield "[DONE]"


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: the text ones, joined
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


async def _parse(request: Request) -> ChatRequest:
    try:
        return ChatRequest.model_validate(await request.json())
    except ValueError as exc:
        problem = (
            describe_validation_error(exc, model=ChatRequest)
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        raise HTTPException(400, f"{request.url.path}: {problem}") from None


async def _error(_request: Request, exc: Exception) -> Response:
    """Errors in OpenAI's shape, with a one-line message."""
    assert isinstance(exc, HTTPException)
    kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    return JSONResponse({"error": {"message": exc.detail, "type": kind}}, status_code=exc.status_code)
