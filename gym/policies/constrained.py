"""Constrained decoding of tool calls with xgrammar: a call, once started, can only be a well-formed one.

`tool_call_processor(tokenizer, tools)` returns a logits processor for the
engine. In `auto` mode the model writes freely until it opens `<tool_call>`;
from there to `</tool_call>` only a JSON list of calls to the offered tools,
with their argument schemas, can follow. With `required=True` the turn must be
a call (OpenAI's tool_choice="required"). The processor masks logits only:
the logprobs recorded for training stay the model's own.

The processor also ends the turn: once a call's closing tag is written it
allows only the end token. (A plain stop string would not do: `</tool_call>`
may appear inside a JSON string, where it does not end the call.)
"""

from __future__ import annotations

import functools
import json
from typing import Any

from core.errors import PolicyError
from gym.policies.chat_render import CALL_CLOSE, CALL_OPEN

MAX_CALLS = 4  # calls in one turn
MAX_STRING = 400  # characters in one string argument (a runaway string would hit max_new_tokens mid-call)
CALL_OVERHEAD_TOKENS = 48  # the tags, the JSON skeleton and the tool's name


def string_cap(max_new_tokens: int) -> int:
    """Characters one string argument may take so that a call still closes within the turn's tokens.

    A token holds at least one character, so a string of N characters costs at most N
    tokens; half the budget left after the call's skeleton keeps a runaway string (a
    small model repeating itself) from ending the turn mid-call as invalid JSON.
    """
    return max(16, min(MAX_STRING, (max_new_tokens - CALL_OVERHEAD_TOKENS) // 2))


def calls_schema(
    tools: list[dict[str, Any]], *, strict_arguments: bool = True, max_string: int = MAX_STRING
) -> dict[str, Any]:
    """JSON schema of what goes inside the tags: one call, or a non-empty list of them (SmolLM2's way)."""
    options, definitions = [], {}
    for tool in tools:
        function = tool["function"]
        arguments = dict(
            (function.get("parameters") or {"type": "object"}) if strict_arguments else {"type": "object"}
        )
        # `#/$defs/...` references must resolve from the root of this schema
        definitions.update({k: v for k, v in arguments.pop("$defs", {}).items() if k not in definitions})
        if strict_arguments and arguments.get("type") == "object":  # the tool would refuse unknown arguments
            arguments = {"additionalProperties": False, **arguments}
        options.append(
            {
                "type": "object",
                "properties": {"name": {"const": function["name"]}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    call = {"anyOf": options}
    schema = {
        "anyOf": [{"type": "array", "minItems": 1, "maxItems": MAX_CALLS, "items": call}, call],
        "$defs": definitions,
    }
    return _bounded(schema, max_string)


def _bounded(schema: Any, max_string: int) -> Any:
    """The schema with every string capped at `max_string` characters: a call must fit in a turn."""
    if isinstance(schema, list):
        return [_bounded(item, max_string) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value, max_string) for key, value in schema.items()}
    if out.get("type") == "string" and "maxLength" not in out and "enum" not in out and "const" not in out:
        out["maxLength"] = max_string
    return out


@functools.lru_cache(maxsize=8)
def _compiler(tokenizer: Any, vocab_size: int) -> Any:
    import xgrammar as xgr

    return xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size))


@functools.lru_cache(maxsize=64)
def _grammar(tokenizer: Any, vocab_size: int, tools_json: str, required: bool, max_string: int) -> Any:
    import xgrammar as xgr

    tools = json.loads(tools_json)
    compiler = _compiler(tokenizer, vocab_size)
    for strict in (True, False):  # a schema xgrammar cannot compile falls back to "any object" arguments
        schema = json.dumps(calls_schema(tools, strict_arguments=strict, max_string=max_string))
        try:
            if required:
                grammar = xgr.Grammar.concat(
                    xgr.Grammar.from_ebnf(f'root ::= "{CALL_OPEN}"'),
                    xgr.Grammar.from_json_schema(schema, any_whitespace=False),
                    xgr.Grammar.from_ebnf(f'root ::= "{CALL_CLOSE}"'),
                )
                return compiler.compile_grammar(grammar)
            tags = [xgr.StructuralTagItem(begin=CALL_OPEN, schema=schema, end=CALL_CLOSE)]
            return compiler.compile_structural_tag(tags, [CALL_OPEN])
        except Exception:
            if not strict:
                raise
    raise AssertionError("unreachable")


class ToolCallProcessor:
    """Masks the logits of one request so its tool calls follow the grammar (state: the tokens accepted so far)."""

    def __init__(
        self, tokenizer: Any, tools: list[dict[str, Any]], required: bool, end_ids: list[int], max_string: int
    ):
        self.tokenizer, self.tools_json, self.required = (
            tokenizer,
            json.dumps(tools, sort_keys=True),
            required,
        )
        self.end_ids, self.max_string = end_ids, max_string
        self.matcher: Any = None
        self.bitmask: Any = None
        self.accepted = 0

    def __call__(self, generated: list[int], logits: Any) -> Any:
        import xgrammar as xgr

        if generated and self._call_closed(generated):
            ended = logits.new_full(logits.shape, float("-inf"))
            ended[self.end_ids] = logits[self.end_ids]
            return ended
        if self.matcher is None:
            try:
                compiled = _grammar(
                    self.tokenizer, logits.shape[-1], self.tools_json, self.required, self.max_string
                )
            except ImportError as exc:
                raise PolicyError(
                    f"constrained decoding needs xgrammar: {exc} (pip install xgrammar)"
                ) from None
            self.matcher = xgr.GrammarMatcher(compiled)
            self.bitmask = xgr.allocate_token_bitmask(1, logits.shape[-1])
        for token in generated[self.accepted :]:
            self.matcher.accept_token(token)
        self.accepted = len(generated)
        if self.matcher.is_terminated():
            return logits
        self.matcher.fill_next_token_bitmask(self.bitmask)
        masked = logits.clone()[None]
        # xgrammar fills its mask on the CPU; applying it needs the logits' device
        xgr.apply_token_bitmask_inplace(masked, self.bitmask.to(masked.device))
        return masked[0]

    def _call_closed(self, generated: list[int]) -> bool:
        """Whether the text ends with a call's closing tag after a complete JSON value."""
        tail = self.tokenizer.decode(generated[-8:], skip_special_tokens=False)
        if not tail.rstrip().endswith(CALL_CLOSE):
            return False
        text = self.tokenizer.decode(generated, skip_special_tokens=False).rstrip()
        body = text[text.rfind(CALL_OPEN) + len(CALL_OPEN) : -len(CALL_CLOSE)].strip()
        try:
            json.loads(body)
        except ValueError:
            return False
        return True


def tool_call_processor(
    tokenizer: Any,
    tools: list[dict[str, Any]],
    end_ids: list[int],
    *,
    required: bool = False,
    max_new_tokens: int = 1024,
) -> ToolCallProcessor:
    """A fresh processor for one turn (it keeps per-request state); strings sized to the turn's budget."""
    return ToolCallProcessor(tokenizer, tools, required, end_ids, string_cap(max_new_tokens))
