"""Tool calls in raw model text, in the formats models actually emit.

Recognised, several per turn, with prose before, between or after them:

- Hermes / Qwen: `<tool_call>{"name": "bash", "arguments": {...}}</tool_call>` (one block per call);
- SmolLM2: a JSON list of calls inside one `<tool_call>...</tool_call>` block;
- Llama 3: bare `{"name": ..., "parameters": {...}}`, optionally after `<|python_tag|>`;
- Mistral: `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`, or `[TOOL_CALLS]name[ARGS]{...}`;
- a bare JSON list of calls, and calls in fenced code blocks (three backticks, then json).

Inside markers (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`) any name counts as a call and
a body that is not valid JSON is still returned, with `error` saying what is wrong,
so the model is told instead of the turn being taken as an answer. Outside markers,
JSON counts as a call only when it names an offered tool, so an answer that happens
to contain JSON is not mistaken for one. JSON is read with `raw_decode`, so trailing
text after a valid call does not spoil it. Nothing here raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from core.trajectory import ToolCall

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([A-Za-z_][\w.\-]*)\s*\[ARGS\]")
MARKERS = re.compile(r"\[TOOL_CALLS\]|<\|python_tag\|>")
FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code|javascript)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
NAME_GUESS = re.compile(r'"(?:name|tool|tool_name)"\s*:\s*"([^"]+)"')
_DECODER = json.JSONDecoder()
BARE_SCAN_LIMIT = 100_000


@dataclass
class _Found:
    start: int
    end: int
    calls: list[tuple[str, str, str | None]]  # (name, arguments JSON text, error)


def parse_tool_calls(
    text: str, id_prefix: str = "call", tool_names: Collection[str] | None = None
) -> tuple[str, list[ToolCall]]:
    """(the text without its tool calls, the calls in order). `tool_names`: the offered tools, if known."""
    try:
        found = _find(text, set(tool_names or ()))
    except RecursionError:  # absurdly nested JSON: treat the turn as text
        found = []
    calls, kept, position = [], [], 0
    for item in sorted(found, key=lambda f: f.start):
        if item.start < position:
            continue
        kept.append(text[position : item.start])
        position = item.end
        for name, arguments, error in item.calls:
            calls.append(
                ToolCall(id=f"{id_prefix}_{len(calls)}", name=name, arguments=arguments, error=error)
            )
    kept.append(text[position:])
    content = re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()
    return content, calls


def _find(text: str, names: set[str]) -> list[_Found]:
    found: list[_Found] = []
    for match in BLOCK.finditer(text):  # Hermes, Qwen, SmolLM2
        found.append(_Found(match.start(), match.end(), _marked(match.group(1))))
    for match in MISTRAL_NAMED.finditer(text):  # [TOOL_CALLS]name[ARGS]{...}
        value, end = _decode_at(text, _skip_space(text, match.end()))
        if isinstance(value, dict):
            found.append(_Found(match.start(), end, [(match.group(1), json.dumps(value), None)]))
        else:
            found.append(
                _Found(
                    match.start(),
                    len(text),
                    [
                        (
                            match.group(1),
                            text[match.end() :].strip(),
                            "the arguments after [ARGS] are not a JSON object",
                        )
                    ],
                )
            )
    for match in MARKERS.finditer(text):  # [TOOL_CALLS] [...], <|python_tag|>{...}
        if _inside(match.start(), found):
            continue
        start = _skip_space(text, match.end())
        value, end = _decode_at(text, start)
        calls = _calls(value, names=None) if value is not None else None
        if calls:
            found.append(_Found(match.start(), end, calls))
        elif start < len(text):
            found.append(_Found(match.start(), len(text), [_malformed(text[start:])]))
    for match in FENCE.finditer(text):  # fenced code blocks holding calls
        if _inside(match.start(), found):
            continue
        value, _ = _decode_at(match.group(1), _skip_space(match.group(1), 0))
        calls = _calls(value, names)
        if calls:
            found.append(_Found(match.start(), match.end(), calls))
    found.extend(_bare(text, names, found))
    return found


def _bare(text: str, names: set[str], found: list[_Found]) -> list[_Found]:
    """JSON objects or lists in the prose that name an offered tool (Llama 3, plain lists)."""
    out: list[_Found] = []
    if len(text) > BARE_SCAN_LIMIT:  # a runaway completion: only marked calls are looked for
        return out
    position = 0
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            return out
        start = min(starts)
        if _inside(start, found):
            position = start + 1
            continue
        value, end = _decode_at(text, start)
        calls = _calls(value, names) if value is not None else None
        if calls:
            out.append(_Found(start, end, calls))
            position = end
        else:
            position = start + 1


def _marked(body: str) -> list[tuple[str, str, str | None]]:
    """The calls in a `<tool_call>` block; a malformed one becomes a call with an error."""
    start = _skip_space(body, 0)
    value, end = _decode_at(body, start)
    calls = _calls(value, names=None) if value is not None else None
    if calls:
        return calls
    return [_malformed(body.strip())]


def _malformed(body: str) -> tuple[str, str, str | None]:
    guess = NAME_GUESS.search(body)
    try:
        _DECODER.raw_decode(body)
        problem = 'not a call: expected {"name": ..., "arguments": {...}}'
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON ({exc.msg} at position {exc.pos})"
    except RecursionError:
        problem = "invalid JSON (nested too deeply)"
    return (guess.group(1) if guess else "", body[:2000], problem)


def _calls(value: Any, names: set[str] | None) -> list[tuple[str, str, str | None]] | None:
    """`value` as calls: one call object or a non-empty list of them. `names`: require known tool names."""
    items = value if isinstance(value, list) else [value]
    calls = [_call(item) for item in items]
    if not items or any(call is None for call in calls):
        return None
    if names is not None and not all(call[0] in names for call in calls):  # type: ignore[index]
        return None
    return calls  # type: ignore[return-value]


def _call(item: Any) -> tuple[str, str, str | None] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
        item = item["function"]
    name = next((item[k] for k in NAME_KEYS if isinstance(item.get(k), str)), None)
    if not name:
        return None
    arguments = next((item[k] for k in ARGUMENT_KEYS if k in item), {})
    if isinstance(arguments, str):  # arguments as JSON text (OpenAI style)
        try:
            decoded = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return (name, arguments, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})")
        arguments = decoded
    if not isinstance(arguments, dict):
        return (name, json.dumps(arguments), "arguments must be a JSON object")
    return (name, json.dumps(arguments), None)


def _decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value starting at `start` and where it ends; (None, start) when there is none."""
    if start >= len(text) or text[start] not in "{[":
        return None, start
    try:
        return _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return None, start


def _skip_space(text: str, start: int) -> int:
    while start < len(text) and text[start].isspace():
        start += 1
    return start


def _inside(position: int, found: list[_Found]) -> bool:
    return any(f.start <= position < f.end for f in found)
