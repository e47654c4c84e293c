"""Messages -> a model's chat template -> token ids, and a completion's tokens -> an AssistantTurn.

Shared by the local-model policies (`hf`, `vllm`): both render the prompt
themselves, so they know exactly which token ids the model saw and wrote.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from gym.policies.toolcall_parser import parse_tool_calls
from gym.trajectory import AssistantTurn, Message


def template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in the shape chat templates expect (tool-call arguments as objects, not JSON text)."""
    out = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                                  for c in message.tool_calls]
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id
            item["name"] = message.name
        out.append(item)
    return out


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw  # shown to the model as it wrote it


def render_prompt_ids(tokenizer: Any, messages: list[Message], tools: list[dict[str, Any]],
                      template_kwargs: dict[str, Any] | None = None) -> list[int]:
    text = tokenizer.apply_chat_template(template_messages(messages), tools=tools or None, tokenize=False,
                                         add_generation_prompt=True, **(template_kwargs or {}))
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def stop_token_ids(tokenizer: Any, model_eos: int | list[int] | None = None) -> list[int]:
    ids = set([model_eos] if isinstance(model_eos, int) else (model_eos or []))
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return sorted(ids)


def completion_turn(tokenizer: Any, prompt_ids: list[int], token_ids: list[int], logprobs: list[float],
                    stop_ids: list[int], finish_reason: str | None = None) -> AssistantTurn:
    """Decode the model's tokens (the stop token stays in token_ids: the model chose it) and parse tool calls."""
    body = token_ids[:-1] if token_ids and token_ids[-1] in stop_ids else token_ids
    text = tokenizer.decode(body, skip_special_tokens=False)
    content, calls = parse_tool_calls(text, id_prefix=f"call_{uuid.uuid4().hex[:8]}")
    stopped = bool(token_ids) and token_ids[-1] in stop_ids
    return AssistantTurn(
        content=content, tool_calls=calls, prompt_token_ids=list(prompt_ids), token_ids=list(token_ids),
        logprobs=[float(x) for x in logprobs], prompt_tokens=len(prompt_ids), completion_tokens=len(token_ids),
        finish_reason=finish_reason or ("stop" if stopped else "length"),
    )
