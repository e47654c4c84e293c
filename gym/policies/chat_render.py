"""Messages -> a model's chat template -> token ids, and a completion's tokens -> an AssistantTurn.

Shared by the policies that render prompts themselves (`hf`, `vllm`, the
trainer's samplers), so they know exactly which token ids the model saw and wrote.

A chat template that cannot show tools (no `tools` in it, like SmolLM2's) is
never handed the tool list to drop silently: the list goes into the system
prompt in egym's own words, the model is asked for SmolLM2's format (a JSON list
inside `<tool_call>` tags), earlier calls and results are written the same way,
and a warning says so once per tokenizer.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from core.trajectory import AssistantTurn, Message
from gym.policies.toolcall_parser import parse_tool_calls

log = logging.getLogger(__name__)
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
TOOLS_HEADER = """\
# Tools
You can use the tools below. To call tools, reply with a JSON list inside {open}{close} tags, e.g.
{open}[{example}]{close}
Each result comes back in the next message. When you are done, reply in plain text without a tool call.

"""
_warned: set[int] = set()


def native_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template renders a tool list itself."""
    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = template.get("tool_use") or template.get("default") or ""
    return "tools" in (template or "")


def stop_strings(tokenizer: Any, tools: list[dict[str, Any]]) -> tuple[str, ...]:
    """Where to stop generating: right after a call, when the model writes calls in `<tool_call>` tags."""
    if tools and (not native_tools(tokenizer) or CALL_OPEN in str(tokenizer.chat_template)):
        return (CALL_CLOSE,)
    return ()


def template_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in the shape chat templates expect (tool-call arguments as objects, not JSON text)."""
    out = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c.arguments)},
                }
                for c in message.tool_calls
            ]
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id
            item["name"] = message.name
        out.append(item)
    return out


def tools_in_prompt(messages: list[Message], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for a template without tool support: tools listed in the system prompt, calls and results as text."""
    listing = render_tools(tools)
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            text = f'<tool_response name="{message.name}">\n{message.content}\n</tool_response>'
            if out and out[-1]["role"] == "user" and out[-1].get("_results"):
                out[-1]["content"] += "\n" + text
            else:
                out.append({"role": "user", "content": text, "_results": True})
            continue
        content = message.content
        if message.tool_calls:
            calls = [{"name": c.name, "arguments": _arguments(c.arguments)} for c in message.tool_calls]
            content = (content + "\n" if content else "") + f"{CALL_OPEN}{json.dumps(calls)}{CALL_CLOSE}"
        out.append({"role": message.role, "content": content})
    if out and out[0]["role"] == "system":
        out[0]["content"] = out[0]["content"].rstrip() + "\n\n" + listing
    else:
        out.insert(0, {"role": "system", "content": listing})
    return [{k: v for k, v in m.items() if not k.startswith("_")} for m in out]


def render_tools(tools: list[dict[str, Any]]) -> str:
    """The tool list, one line per tool: name(parameters): the first line of its description."""
    lines = []
    for tool in tools:
        function = tool["function"]
        params = function.get("parameters") or {}
        required = set(params.get("required") or [])
        signature = ", ".join(
            f"{name}{'' if name in required else '?'}: {_type(spec)}"
            for name, spec in (params.get("properties") or {}).items()
        )
        description = (function.get("description") or "").strip().splitlines()
        lines.append(
            f"- {function['name']}({signature}): {description[0] if description else ''}".rstrip(": ")
        )
    first = tools[0]["function"] if tools else {"name": "tool", "parameters": {}}
    example = {
        "name": first["name"],
        "arguments": {k: "..." for k in (first.get("parameters") or {}).get("required", [])[:2]},
    }
    return TOOLS_HEADER.format(open=CALL_OPEN, close=CALL_CLOSE, example=json.dumps(example)) + "\n".join(
        lines
    )


def _type(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list[{_type(spec.get('items') or {})}]"
    return kind if isinstance(kind, str) else "|".join(kind)


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw  # shown to the model as it wrote it


def render_prompt_ids(
    tokenizer: Any,
    messages: list[Message],
    tools: list[dict[str, Any]],
    template_kwargs: dict[str, Any] | None = None,
) -> list[int]:
    if tools and not native_tools(tokenizer):
        if id(tokenizer) not in _warned:
            _warned.add(id(tokenizer))
            log.warning(
                "%s: the chat template cannot show tools; egym lists them in the system prompt",
                getattr(tokenizer, "name_or_path", "") or "this model",
            )
        rendered, tools = tools_in_prompt(messages, tools), []
    else:
        rendered = template_messages(messages)
    text = tokenizer.apply_chat_template(
        rendered, tools=tools or None, tokenize=False, add_generation_prompt=True, **(template_kwargs or {})
    )
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def stop_token_ids(tokenizer: Any, model_eos: int | list[int] | None = None) -> list[int]:
    ids = set([model_eos] if isinstance(model_eos, int) else (model_eos or []))
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return sorted(ids)


def completion_turn(
    tokenizer: Any,
    prompt_ids: list[int],
    token_ids: list[int],
    logprobs: list[float],
    stop_ids: list[int],
    finish_reason: str | None = None,
    tool_names: list[str] | None = None,
    cached_tokens: int | None = None,
) -> AssistantTurn:
    """Decode the model's tokens (the stop token stays in token_ids: the model chose it) and parse tool calls.

    A completion cut by max_new_tokens ("length") or by the time limit ("cancelled") is `truncated`.
    """
    body = token_ids[:-1] if token_ids and token_ids[-1] in stop_ids else token_ids
    text = tokenizer.decode(body, skip_special_tokens=False)
    content, calls = parse_tool_calls(text, id_prefix=f"call_{uuid.uuid4().hex[:8]}", tool_names=tool_names)
    stopped = bool(token_ids) and token_ids[-1] in stop_ids
    reason = finish_reason or ("stop" if stopped else "length")
    return AssistantTurn(
        content=content,
        tool_calls=calls,
        prompt_token_ids=list(prompt_ids),
        token_ids=list(token_ids),
        logprobs=[float(x) for x in logprobs],
        prompt_tokens=len(prompt_ids),
        cached_tokens=cached_tokens,
        completion_tokens=len(token_ids),
        finish_reason=reason,
        truncated=reason in ("length", "cancelled"),
    )
