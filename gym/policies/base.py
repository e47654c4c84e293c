"""The Policy protocol: one method, like mini-swe-agent's Model.

Optional capabilities, checked with isinstance, let the harness manage context
with the policy's own tokenizer and summariser when it has them, and cap a
policy's turns at fewer new tokens (per-level limits).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Message


class ContextLimitExceeded(PolicyError):
    """The conversation no longer fits the model's window; the episode ends as `context_limit`."""


@runtime_checkable
class Policy(Protocol):
    name: str

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The assistant's next turn given the conversation and OpenAI-format tool schemas."""
        ...


@runtime_checkable
class CountsTokens(Protocol):
    """A policy that knows its window and can count the tokens of a rendered conversation."""

    context_window: int | None

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int: ...


@runtime_checkable
class Summarizes(Protocol):
    """A policy that can summarise older turns when the context is compacted."""

    async def summarize(self, messages: list[Message]) -> str: ...


@runtime_checkable
class CapsNewTokens(Protocol):
    """A policy that can be held to fewer new tokens a turn (gym.harness.config.LevelLimits)."""

    def capped(self, max_new_tokens: int) -> Policy:
        """A copy whose turns stop at `max_new_tokens` at most (never more than its own limit)."""
        ...
