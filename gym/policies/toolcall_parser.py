"""Tool calls in raw model text, Hermes/Qwen style: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

Used by the `hf` and `vllm` policies, which see the model's text rather than
a server's parsed tool calls. A call that cannot be parsed is still returned
(with its raw text as arguments), so the model is told what was wrong instead
of the episode breaking.
"""

from __future__ import annotations

import json
import re

from gym.trajectory import ToolCall

BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def parse_tool_calls(text: str, id_prefix: str = "call") -> tuple[str, list[ToolCall]]:
    """(content without the tool-call blocks, the calls in order). An unclosed last block still counts."""
    calls = []
    for index, match in enumerate(BLOCK.finditer(text)):
        body = match.group(1).strip()
        calls.append(_call(body, f"{id_prefix}_{index}"))
    content = BLOCK.sub("", text).strip()
    return content, calls


def _call(body: str, call_id: str) -> ToolCall:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        found = NAME.search(body)
        return ToolCall(id=call_id, name=found.group(1) if found else "", arguments=body)
    arguments = data.get("arguments", data.get("parameters", {}))
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=data["name"], arguments=raw)
