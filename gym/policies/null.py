"""`null`: answers at once without acting. The floor every rubric must hold (the agent did nothing)."""

from __future__ import annotations

from typing import Any

from core.trajectory import AssistantTurn, Message


class NullPolicy:
    name = "null"
    model = None

    def __init__(self, answer: str = "done"):
        self.answer = answer

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        return AssistantTurn(content=self.answer)
