"""Context management: keep the transcript sent to the policy under the model's window.

The system prompt and the task (everything up to the first user message) are
never touched, and the latest turns are kept verbatim for as long as they fit.
In order, until the context fits:

1. without a summariser, older tool outputs are trimmed to their first lines;
2. the oldest turns are replaced by one summary message (the policy writes it
   when it can summarise, else a deterministic digest of the calls made);
3. the tool outputs of the remaining turns are trimmed too.

If even that does not fit, `ContextOverflow` ends the episode (`context_limit`).
The loop keeps working on the compacted list, so later turns build on it;
`Trajectory.messages` always holds the full transcript.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.trajectory import Message
from gym.harness.config import ContextConfig
from gym.policies.base import ContextLimitExceeded

TokenCounter = Callable[[list[Message], list[dict[str, Any]]], int]
Summarizer = Callable[[list[Message]], Awaitable[str]]
SUMMARY_NAME = "egym-context-summary"
TRIM_NOTE = "[... {n:,} characters of older output removed to fit the context window]"
DIGEST_LINES = 40
DIGEST_HEADER = "Earlier steps of this session, oldest first:"


class ContextOverflow(ContextLimitExceeded):
    """The system prompt, task and latest turn alone exceed the budget."""


@dataclass(frozen=True)
class Fitted:
    messages: list[Message]
    tokens: int
    compacted: bool


def _split(messages: list[Message]) -> tuple[list[Message], Message | None, list[list[Message]]]:
    """(head, previous summary, turns): a turn is an assistant message and the tool results after it."""
    first_user = next((i for i, m in enumerate(messages) if m.role == "user"), 0)
    head, rest = messages[: first_user + 1], messages[first_user + 1 :]
    summary = None
    if rest and rest[0].name == SUMMARY_NAME:
        summary, rest = rest[0], rest[1:]
    turns: list[list[Message]] = []
    for message in rest:
        if message.role == "tool" and turns:
            turns[-1].append(message)
        else:
            turns.append([message])
    return head, summary, turns


def _trim(turn: list[Message], keep: int) -> list[Message]:
    out = []
    for message in turn:
        if message.role == "tool" and len(message.content) > keep + 120:
            cut = len(message.content) - keep
            message = message.model_copy(
                update={"content": message.content[:keep] + "\n" + TRIM_NOTE.format(n=cut)}
            )
        out.append(message)
    return out


def _digest(previous: str, dropped: list[list[Message]]) -> str:
    """A deterministic summary: the previous summary's lines, then the calls made in the dropped turns."""
    lines = [line for line in previous.splitlines() if line.strip() and line != DIGEST_HEADER]
    for turn in dropped:
        results = {m.tool_call_id: m.content for m in turn if m.role == "tool"}
        head = turn[0]
        if head.content.strip():
            lines.append(f"- {head.role} wrote: {_one_line(head.content, 160)}")
        for call in head.tool_calls:
            outcome = _one_line(results.get(call.id, "(no result)"), 100)
            lines.append(f"- {call.name} {_one_line(call.arguments, 120)} -> {outcome}")
    if len(lines) > DIGEST_LINES:  # the first steps (orientation) and the latest ones matter most
        head, tail = lines[: DIGEST_LINES // 4], lines[-(DIGEST_LINES - DIGEST_LINES // 4) :]
        lines = [*head, f"- (... {len(lines) - len(head) - len(tail)} steps omitted ...)", *tail]
    return "\n".join([DIGEST_HEADER, *lines])


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def _summary_message(text: str) -> Message:
    note = "[Context note: older turns of this session were compacted to fit the context window.]\n"
    return Message(role="user", name=SUMMARY_NAME, content=note + text)


class ContextManager:
    def __init__(
        self,
        budget: int | None,
        counter: TokenCounter,
        config: ContextConfig,
        summarize: Summarizer | None = None,
    ):
        self.budget, self.counter, self.config, self.summarize = budget, counter, config, summarize

    async def fit(self, messages: list[Message], tools: list[dict[str, Any]]) -> Fitted:
        tokens = self.counter(messages, tools)
        if self.budget is None or tokens <= self.budget:
            return Fitted(messages, tokens, False)
        head, summary, turns = _split(messages)
        previous = summary.content.split("\n", 1)[1] if summary else ""
        keep_chars = self.config.trimmed_output_chars
        if self.summarize is None:
            recent = self.config.keep_recent_turns
            turns = [_trim(t, keep_chars) if i < len(turns) - recent else t for i, t in enumerate(turns)]
            candidate = [*head, *([summary] if summary else []), *(m for t in turns for m in t)]
            if (tokens := self.counter(candidate, tools)) <= self.budget:
                return Fitted(candidate, tokens, True)
        dropped, kept = self._drop(turns)
        text = await self._summary_text(previous, dropped)
        while True:
            candidate = [*head, *([_summary_message(text)] if text else []), *(m for t in kept for m in t)]
            if (tokens := self.counter(candidate, tools)) <= self.budget:
                return Fitted(candidate, tokens, True)
            if len(kept) > 1:  # still too long: one more turn goes into the digest
                text = _digest(text, [kept.pop(0)])
                continue
            trimmed = [_trim(t, keep_chars) for t in kept]
            if trimmed == kept:
                raise ContextOverflow(
                    f"context needs {tokens} tokens even after compaction; budget {self.budget}"
                )
            kept = trimmed

    def _drop(self, turns: list[list[Message]]) -> tuple[list[list[Message]], list[list[Message]]]:
        """Oldest turns go into the summary; the latest `keep_recent_turns` (at least one) stay."""
        keep = max(1, min(self.config.keep_recent_turns, len(turns)))
        return list(turns[:-keep]), list(turns[-keep:])

    async def _summary_text(self, previous: str, dropped: list[list[Message]]) -> str:
        if not dropped:
            return previous
        if self.summarize is None:
            return _digest(previous, dropped)
        seed = [_summary_message(previous)] if previous else []
        return (await self.summarize([*seed, *(m for t in dropped for m in t)])).strip()
