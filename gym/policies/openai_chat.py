"""`openai`: any OpenAI-compatible chat-completions endpoint with tool calling (vLLM's server, hosted APIs).

Retries (429 with Retry-After, 5xx, timeouts) are the `openai` client's own.
OpenAI-style APIs only accept function names matching ^[a-zA-Z0-9_-]{1,64}$,
so the canonical dotted names (`chat.post_message`) become `chat__post_message`
on the wire and are mapped back in the reply: the rest of the gym only ever
sees canonical names.

With `token_ids=True` the request asks a vLLM server for token ids and
logprobs (`logprobs`, `return_token_ids`, `return_tokens_as_token_ids`); a
server that ignores them just leaves those fields empty in the turn.

With `tools="prompt"` the tool list is not sent as the API's `tools`: it is
written into the system prompt and calls are read back from the reply's text,
as the `hf` policy does for chat templates without tool support. That serves
endpoints that refuse `tools` (vLLM without `--enable-auto-tool-choice`,
llama.cpp without `--jinja`) or whose tool parser does not fit the model.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

import openai

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Message, ToolCall, estimate_tokens
from gym.policies.base import ContextLimitExceeded
from gym.policies.chat_render import CALL_CLOSE, CALL_OPEN, tools_in_prompt
from gym.policies.toolcall_parser import parse_tool_calls

CONTEXT_ERRORS = re.compile(
    r"context length|context window|maximum context|too many tokens|prompt is too long", re.I
)
# How vLLM ("auto" tool choice requires --enable-auto-tool-choice ...) and llama.cpp ("tools param
# requires --jinja flag") refuse a request with `tools` when started without tool calling.
TOOLS_REFUSED = re.compile(r"enable-auto-tool-choice|tool-call-parser|--jinja", re.I)
TOKEN_ID = re.compile(r"^token_id:(\d+)$")
SUMMARY_PROMPT = (
    "You compress the earlier part of an agent's work session so it can continue with less context. "
    "Write a concise summary: what was asked, what was done (commands, files, records, messages), "
    "what was found (exact names, numbers, ids), and what remains. Plain text, no preamble."
)


def wire_name(name: str) -> str:
    return name.replace(".", "__")


def endpoint(model: str | None, base_url: str | None) -> tuple[str, str]:
    """The model and base URL a policy built with these options talks to ($OPENAI_MODEL, $OPENAI_BASE_URL)."""
    model = model or os.environ.get("OPENAI_MODEL")
    if not model:
        raise PolicyError("openai policy: no model given; pass model=... or set OPENAI_MODEL")
    return model, base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"


class OpenAIPolicy:
    name = "openai"

    @staticmethod
    def model_key(options: dict[str, Any]) -> str:
        """The endpoint's model name and base URL (gym.models.identity)."""
        from gym.models.identity import endpoint_key

        return endpoint_key(*endpoint(options.get("model"), options.get("base_url")))

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        max_tokens: int | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        token_ids: bool = False,
        extra_body: dict[str, Any] | None = None,
        context_window: int | None = None,
        tool_choice: Literal["auto", "first", "required"] = "auto",
        tools: Literal["api", "prompt"] = "api",
    ):
        """`tool_choice`: "first" asks the server for a tool call on the first turn only ("required" always).
        `tools`: "api" sends the tool list as the API's `tools`; "prompt" writes it into the system prompt."""
        self.model, self.base_url = endpoint(model, base_url)
        self.client = openai.AsyncOpenAI(
            base_url=self.base_url,
            timeout=timeout_s,
            max_retries=max_retries,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
        )
        self.sampling = {
            k: v
            for k, v in {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}.items()
            if v is not None
        }
        self.token_ids, self.extra_body = token_ids, dict(extra_body or {})
        self.context_window = context_window
        if tool_choice not in ("auto", "first", "required"):
            raise PolicyError(
                f"openai policy: tool_choice must be auto, first or required, not {tool_choice!r}"
            )
        self.tool_choice = tool_choice
        if tools not in ("api", "prompt"):
            raise PolicyError(f"openai policy: tools must be api or prompt, not {tools!r}")
        if tools == "prompt" and tool_choice != "auto":
            raise PolicyError(
                "openai policy: tool_choice needs tools=api (a server cannot force a call written in the prompt)"
            )
        self.tools_in_prompt = tools == "prompt"

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages, tools)

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        if self.tools_in_prompt and tools:
            return await self._next_with_tools_in_prompt(messages, tools)
        names = {wire_name(t["function"]["name"]): t["function"]["name"] for t in tools}
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in messages],
            **self.sampling,
        }
        if tools:
            request["tools"] = [
                {**t, "function": {**t["function"], "name": wire_name(t["function"]["name"])}} for t in tools
            ]
            first = not any(m.tool_calls for m in messages)
            if self.tool_choice == "required" or (self.tool_choice == "first" and first):
                request["tool_choice"] = "required"
        extra = dict(self.extra_body)
        if self.token_ids:
            request["logprobs"] = True
            extra.update(return_token_ids=True, return_tokens_as_token_ids=True)
        response = await self._create(request, extra)
        return _turn(response, names)

    async def _next_with_tools_in_prompt(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> AssistantTurn:
        names = [t["function"]["name"] for t in tools]
        request: dict[str, Any] = {
            "model": self.model,
            "messages": tools_in_prompt(messages, tools),
            "stop": [CALL_CLOSE],  # one call block per turn: the model gets the result before going on
            **self.sampling,
        }
        extra = dict(self.extra_body)
        if self.token_ids:
            request["logprobs"] = True
            extra.update(return_token_ids=True, return_tokens_as_token_ids=True)
        response = await self._create(request, extra)
        turn = _turn(response, {wire_name(n): n for n in names})
        text = turn.content
        if response.choices[0].finish_reason == "stop" and text.rfind(CALL_OPEN) > text.rfind(CALL_CLOSE):
            text += CALL_CLOSE  # servers leave the stop string out of the reply
        content, calls = parse_tool_calls(text, id_prefix=f"call_{len(messages)}", tool_names=names)
        return turn.model_copy(update={"content": content, "tool_calls": [*turn.tool_calls, *calls]})

    async def summarize(self, messages: list[Message]) -> str:
        transcript = "\n\n".join(_as_text(m) for m in messages)
        request = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SUMMARY_PROMPT},
                {"role": "user", "content": transcript},
            ],
            **self.sampling,
        }
        response = await self._create(request, dict(self.extra_body))
        return response.choices[0].message.content or ""

    async def _create(self, request: dict[str, Any], extra: dict[str, Any]) -> Any:
        try:
            response = await self.client.chat.completions.create(**request, extra_body=extra or None)
        except openai.BadRequestError as exc:
            if TOOLS_REFUSED.search(str(exc)):
                raise PolicyError(
                    f"{self.base_url} ({self.model}) refuses tool calling: {exc}; start the server with "
                    "its tool-call options (vLLM: --enable-auto-tool-choice --tool-call-parser <parser>; "
                    "llama.cpp: --jinja) or pass -o tools=prompt".replace("\n", " ")
                ) from None
            if CONTEXT_ERRORS.search(str(exc)):
                raise ContextLimitExceeded(
                    f"{self.base_url} ({self.model}): {exc}".replace("\n", " ")
                ) from None
            raise PolicyError(f"{self.base_url} ({self.model}) rejected the request: {exc}") from None
        except openai.APIError as exc:
            raise PolicyError(
                f"{self.base_url} ({self.model}) failed after retries: {exc}; "
                "check the endpoint, key and model name"
            ) from None
        if not response.choices:
            raise PolicyError(f"{self.base_url} ({self.model}) answered with no choices")
        return response


def _wire_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": wire_name(c.name), "arguments": _valid_json(c.arguments)},
            }
            for c in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


def _valid_json(arguments: str) -> str:
    """Servers such as vLLM parse earlier calls' arguments and reject malformed JSON; the model was
    already told its call was malformed (in the tool result), so the history carries `{}` instead."""
    try:
        return arguments if isinstance(json.loads(arguments or "{}"), dict) else "{}"
    except json.JSONDecodeError:
        return "{}"


def _as_text(message: Message) -> str:
    calls = "".join(f"\n-> {c.name}({c.arguments})" for c in message.tool_calls)
    return f"[{message.role}] {message.content}{calls}"


def _turn(response: Any, names: dict[str, str]) -> AssistantTurn:
    choice = response.choices[0]
    message = choice.message
    calls = [
        ToolCall(
            id=c.id, name=names.get(c.function.name, c.function.name), arguments=c.function.arguments or ""
        )
        for c in (message.tool_calls or [])
        if getattr(c, "function", None) is not None
    ]
    data = response.model_dump()
    choice_data = data["choices"][0]
    logprobs, token_ids = _token_info(choice_data)
    usage = response.usage
    return AssistantTurn(
        content=message.content or "",
        tool_calls=calls,
        prompt_token_ids=data.get("prompt_token_ids") or choice_data.get("prompt_token_ids"),
        token_ids=token_ids,
        logprobs=logprobs,
        finish_reason=choice.finish_reason,
        truncated=choice.finish_reason == "length",
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
    )


def _token_info(choice: dict[str, Any]) -> tuple[list[float] | None, list[int] | None]:
    """Logprobs and completion token ids when the server sent them; None for what is missing or inconsistent."""
    entries = (choice.get("logprobs") or {}).get("content") or []
    logprobs = [float(e["logprob"]) for e in entries] or None
    token_ids = choice.get("token_ids")
    if token_ids is None and entries:
        matches = [TOKEN_ID.match(e.get("token") or "") for e in entries]
        token_ids = [int(m.group(1)) for m in matches] if all(matches) else None
    if token_ids is not None and logprobs is not None and len(token_ids) != len(logprobs):
        logprobs = None
    return logprobs, token_ids
