"""What one episode produced: messages, tool calls, results, timings, tokens.

These models cross process and file boundaries (run store, Ray workers,
trainer), so they are strict and JSON round-trippable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from core.strict import StrictModel

Role = Literal["system", "user", "assistant", "tool"]
# Gymnasium's split: `answered` is termination (the agent finished); the
# limits are truncation; `error` means the episode itself broke (infra).
StopReason = Literal["answered", "turn_limit", "time_limit", "context_limit", "error"]


class ToolCall(StrictModel):
    id: str
    name: str
    arguments: str = Field(description="JSON text exactly as the model wrote it (may be malformed).")
    error: str | None = Field(
        None, description="Why the call could not be read from the model's text (not run)."
    )

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError with a model-readable message when malformed."""
        if self.error:
            raise ValueError(f"the tool call could not be read: {self.error}")
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value


class Message(StrictModel):
    """One chat message in OpenAI chat-completions shape."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


class AssistantTurn(StrictModel):
    """What a policy returns for one turn."""

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    prompt_token_ids: list[int] | None = Field(
        None, description="The rendered prompt, when the backend exposes it."
    )
    token_ids: list[int] | None = Field(None, description="The model's own completion tokens.")
    logprobs: list[float] | None = Field(None, description="Sampling logprob of each completion token.")
    prompt_tokens: int | None = None
    cached_tokens: int | None = Field(
        None, description="Prompt tokens the engine read from its prefix cache instead of computing them."
    )
    completion_tokens: int | None = None
    finish_reason: str | None = None
    truncated: bool = Field(
        False, description="Cut by max tokens or the time limit: never taken as the final answer."
    )

    def message(self) -> Message:
        return Message(role="assistant", content=self.content, tool_calls=self.tool_calls)


class ToolResult(StrictModel):
    call_id: str
    name: str
    output: str
    is_error: bool = False
    seconds: float = 0.0
    fault: str | None = Field(None, description="Name of the injected fault, when this failure was injected.")


class Step(StrictModel):
    """One assistant turn and the results of the tool calls it made."""

    index: int
    turn: AssistantTurn
    results: list[ToolResult] = Field(default_factory=list)
    policy_seconds: float = 0.0
    tool_seconds: float = 0.0
    context_tokens: int | None = Field(
        None, description="Tokens in the context sent to the policy this turn."
    )
    compacted: bool = Field(False, description="Context management rewrote older turns before this one.")


class Trajectory(StrictModel):
    task: str = Field(description="Task key, `world/task-id`.")
    policy: str
    model: str | None = None
    messages: list[Message] = Field(default_factory=list, description="Full transcript, never compacted.")
    steps: list[Step] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    final_answer: str | None = None
    error: str | None = None
    started_at: float = 0.0
    seconds: float = 0.0
    meta: dict[str, Any] = Field(
        default_factory=dict, description="Free-form facts (fault seed, tool list...)."
    )

    @property
    def terminated(self) -> bool:
        return self.stop_reason == "answered"

    @property
    def truncated(self) -> bool:
        return self.stop_reason in ("turn_limit", "time_limit", "context_limit")

    def tool_calls(self) -> list[ToolCall]:
        return [call for step in self.steps for call in step.turn.tool_calls]

    @property
    def parse_errors(self) -> int:
        """Tool calls the model wrote that could not be read (each was answered with an error)."""
        return sum(1 for call in self.tool_calls() if call.error)

    def faults(self) -> list[str]:
        return [r.fault for step in self.steps for r in step.results if r.fault]

    @property
    def working_call_turns(self) -> int:
        """Assistant turns with at least one tool call that was read, ran and did not fail
        (no error result; bash's non-zero exit code counts as failing): how far a small model
        is from using the tools at all, whatever the rubric says."""
        return sum(
            any(
                call.error is None and not result.is_error and "[exit code" not in result.output
                for call, result in zip(step.turn.tool_calls, step.results, strict=False)
            )
            for step in self.steps
        )


def estimate_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
    """About four characters per token: the counter when the policy has no tokenizer."""
    chars = sum(
        len(m.content) + 8 + sum(len(c.name) + len(c.arguments) + 16 for c in m.tool_calls) for m in messages
    )
    chars += len(json.dumps(list(tools))) if tools else 0
    return chars // 4 + 1
