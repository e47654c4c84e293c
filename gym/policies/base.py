"""The Policy protocol: one method, like mini-swe-agent's Model."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from gym.trajectory import AssistantTurn, Message


@runtime_checkable
class Policy(Protocol):
    name: str

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The assistant's next turn given the conversation and OpenAI-format tool schemas."""
        ...
