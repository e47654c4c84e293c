"""Context management: long conversations are compacted below a token budget, keeping the task and latest turns."""

from __future__ import annotations

import json

import pytest

from core.trajectory import Message, ToolCall, estimate_tokens
from gym.harness.config import ContextConfig
from gym.harness.context import SUMMARY_NAME, ContextManager, ContextOverflow

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def conversation(turns: int, output_chars: int = 2000) -> list[Message]:
    messages = [
        Message(role="system", content="You are Dana, an analyst."),
        Message(role="user", content="Reconcile the March invoices."),
    ]
    for i in range(turns):
        call = ToolCall(id=f"c{i}", name="bash", arguments=json.dumps({"command": f"cat invoice_{i}.csv"}))
        messages.append(Message(role="assistant", content=f"Looking at invoice {i}.", tool_calls=[call]))
        messages.append(
            Message(
                role="tool",
                tool_call_id=f"c{i}",
                name="bash",
                content=f"invoice {i} total {100 + i}\n" + "x" * output_chars,
            )
        )
    return messages


def assert_well_formed(messages: list[Message]) -> None:
    """Every tool result follows the assistant message that made its call."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            open_calls = {c.id for c in message.tool_calls}
        elif message.role == "tool":
            assert message.tool_call_id in open_calls


async def test_a_long_conversation_is_compacted_below_the_budget():
    messages = conversation(30)
    budget = 3000
    assert estimate_tokens(messages, TOOLS) > 5 * budget
    manager = ContextManager(budget, estimate_tokens, ContextConfig(keep_recent_turns=3))
    fitted = await manager.fit(messages, TOOLS)

    assert fitted.compacted and fitted.tokens <= budget
    assert fitted.tokens == estimate_tokens(fitted.messages, TOOLS)
    assert fitted.messages[:2] == messages[:2]  # system prompt and task untouched
    assert fitted.messages[-6:] == messages[-6:]  # the latest three turns verbatim
    summary = fitted.messages[2]
    assert summary.role == "user" and summary.name == SUMMARY_NAME
    assert "cat invoice_0.csv" in summary.content and "invoice 0 total 100" in summary.content
    assert_well_formed(fitted.messages)


async def test_a_conversation_within_the_budget_is_left_alone():
    messages = conversation(3, output_chars=100)
    fitted = await ContextManager(10_000, estimate_tokens, ContextConfig()).fit(messages, TOOLS)
    assert fitted.messages == messages and not fitted.compacted


async def test_trimming_older_outputs_comes_before_dropping_turns():
    messages = conversation(6, output_chars=1500)
    budget = estimate_tokens(messages, TOOLS) - 500
    fitted = await ContextManager(budget, estimate_tokens, ContextConfig(keep_recent_turns=2)).fit(
        messages, TOOLS
    )
    assert fitted.compacted and fitted.tokens <= budget
    assert len(fitted.messages) == len(messages)  # nothing dropped
    assert "removed to fit the context window" in fitted.messages[3].content
    assert fitted.messages[-4:] == messages[-4:]


async def test_the_policy_summarises_when_it_can():
    seen: list[list[Message]] = []

    async def summarize(dropped: list[Message]) -> str:
        seen.append(dropped)
        return "Checked invoices 0-26; totals 100-126."

    messages = conversation(30)
    manager = ContextManager(3000, estimate_tokens, ContextConfig(keep_recent_turns=3), summarize)
    fitted = await manager.fit(messages, TOOLS)
    assert fitted.tokens <= 3000 and fitted.messages[-6:] == messages[-6:]
    assert fitted.messages[2].content.endswith("Checked invoices 0-26; totals 100-126.")
    assert seen == [messages[2:-6]]  # it was given exactly the turns it replaces, untrimmed


async def test_compaction_builds_on_the_previous_summary():
    manager = ContextManager(3000, estimate_tokens, ContextConfig(keep_recent_turns=3))
    first = await manager.fit(conversation(30), TOOLS)
    grown = first.messages + conversation(40)[62:]  # ten more turns
    second = await manager.fit(grown, TOOLS)
    assert second.tokens <= 3000
    summaries = [m for m in second.messages if m.name == SUMMARY_NAME]
    assert len(summaries) == 1
    assert "cat invoice_26.csv" in summaries[0].content and "cat invoice_35.csv" in summaries[0].content
    assert second.messages[-1] == grown[-1]


async def test_a_budget_too_small_for_the_latest_turn_overflows():
    manager = ContextManager(20, estimate_tokens, ContextConfig())
    with pytest.raises(ContextOverflow, match="budget 20"):
        await manager.fit(conversation(4), TOOLS)
