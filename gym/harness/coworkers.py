"""Coworkers who answer the agent in chat, reproducibly (the task's `coworkers:`, gym.tasks.Coworker).

The clock is the agent's tool calls, not wall time: after each call the session reads what was
said to a coworker (only after a chat call that posts and names one of them, or a shell call) and posts
each reply once its delay, counted in calls, has passed. Which rule answers is decided by the
message; which phrasing and which delay by a hash of (task, person, message), so every rollout
of a group that says the same thing hears the same reply at the same call, and a replay of the
same calls hears them again. The rules stay here on the host; in the sandbox a small CLI
(mcp_wrappers.chat.coworkers, run as the grader) reads the chat and posts as the person.
A model may put the rules' replies in the person's own words (gym/harness/coworker_model.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from core.errors import SandboxError
from gym.harness.coworker_model import CoworkerModel, CoworkerModelError
from gym.sandbox.base import Sandbox
from gym.tasks import Coworker

READER = "grader"  # may read the chat admin token; the agent may not
COWORKERS_CLI = ["/opt/egym/venv/bin/python3", "-I", "-m", "mcp_wrappers.chat.coworkers"]
TIMEOUT_S = 30
MAX_OUTPUT_BYTES = 4 << 20
# The calls that can say something to a coworker, after which the chat is read: the chat app's
# posting tools whose arguments name one of them, and the shell (its curl, whatever it names).
# Reading, listing and searching say nothing. A message the filter misses (a channel given by id)
# is heard at the next read, a little late, never lost.
POSTING_TOOLS = re.compile(r"chat\.(post|send|reply|attach).*")
SHELL_TOOLS = ("bash",)


@dataclass(frozen=True)
class Said:
    """A post addressed to one or more coworkers (in a DM or group with them, or naming them with @)."""

    id: str
    channel_id: str
    channel: str
    root_id: str
    user: str
    message: str
    create_at: int
    to: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    author: str
    channel_id: str
    channel: str
    root_id: str
    message: str
    rule: int | None  # the index of the rule that answered; None: no rule matched (`otherwise`)
    answers: str  # the id of the post it answers
    due_call: int
    source: str = "rules"  # whose words: the rule's, or the coworkers' model's (its details below)
    key: str = ""
    cached: bool = False
    model_text: str = ""
    rejected: str = ""
    word_seconds: float = 0.0


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)


def _normalized(message: str) -> str:
    return " ".join(message.casefold().split())


class Responder:
    """The rule-based coworkers: what each says to a message, and after how many calls. No I/O."""

    def __init__(self, coworkers: list[Coworker], seed: str):
        self.people = {c.username: c for c in coworkers}
        self.seed = seed

    def replies(self, said: Said, call: int) -> list[Reply]:
        out = []
        for username in said.to:
            person = self.people.get(username)
            if person is None:
                continue
            rule, phrasings = next(
                (
                    (index, r.replies)
                    for index, r in enumerate(person.rules)
                    if all(re.search(p, said.message, re.IGNORECASE) for p in r.asks)
                ),
                (None, person.otherwise),
            )
            pick = _hash(self.seed, username, _normalized(said.message))
            low, high = person.delay_calls
            # A thread stays a thread; a mention in a channel is answered in a thread under it.
            root = said.root_id or ("" if said.channel.startswith("dm:") else said.id)
            out.append(
                Reply(
                    author=username,
                    channel_id=said.channel_id,
                    channel=said.channel,
                    root_id=root,
                    message=phrasings[pick % len(phrasings)],
                    rule=rule,
                    answers=said.id,
                    due_call=call + low + (pick >> 16) % (high - low + 1),
                )
            )
        return out


class CoworkerSession:
    """One episode's coworkers, bound to its sandbox. `log` is what was heard and said, for the trajectory."""

    def __init__(
        self,
        sandbox: Sandbox,
        coworkers: list[Coworker],
        seed: str,
        *,
        since_ms: int | None = None,
        model: CoworkerModel | None = None,
    ):
        self.sandbox = sandbox
        self.responder = Responder(coworkers, seed)
        self.model = model
        # What each person and the agent said in each conversation, for the model's context.
        self.history: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.people = ",".join(sorted(self.responder.people))
        # A username or a part of it ("hannah", "schulz"): how a call's arguments may name them.
        self.names = {n for u in self.responder.people for n in (u, *u.split(".")) if len(n) >= 3}
        # Posts from before the episode (the chat files' history) are never answered.
        self.since = since_ms if since_ms is not None else int(time.time() * 1000)
        self.calls = 0
        self.heard: set[str] = set()
        self.pending: list[Reply] = []
        self.log: list[dict[str, Any]] = []
        self.failed = False

    def may_say_something(self, tool: str, arguments: str) -> bool:
        if tool in SHELL_TOOLS:
            return True
        text = arguments.casefold()
        return bool(POSTING_TOOLS.fullmatch(tool)) and any(name in text for name in self.names)

    def after_call(self, tool: str, arguments: str = "") -> None:
        """Advance the clock by one tool call: read what was said if the call could say something, post what is due.

        A failure to read or post is logged (`error`) and ends the coworkers for this episode, never the episode.
        """
        self.calls += 1
        if self.failed:
            return
        try:
            if self.may_say_something(tool, arguments):
                started = time.monotonic()
                new = self._inbox()
                self.log.append({"call": self.calls, "read": len(new), "seconds": _since(started)})
                for said in new:
                    self.heard.add(said.id)
                    self.log.append({"call": self.calls, "heard": asdict(said)})
                    self.pending += [self._worded(r, said) for r in self.responder.replies(said, self.calls)]
            due = [r for r in self.pending if r.due_call <= self.calls]
            self.pending = [r for r in self.pending if r.due_call > self.calls]
            for reply in due:
                started = time.monotonic()
                self._post(reply)
                self.log.append({"call": self.calls, "said": asdict(reply), "seconds": _since(started)})
        except (SandboxError, CoworkerModelError) as exc:
            self.log.append({"call": self.calls, "error": str(exc)})
            self.failed = True  # silent from here on, and the log says why

    def _worded(self, reply: Reply, said: Said) -> Reply:
        """The reply in the person's own words when a model rewords it; the conversation remembered."""
        history = self.history.setdefault((reply.author, reply.channel_id), [])
        if self.model is not None and self.model.rewords(reply.rule is not None):
            started = time.monotonic()
            person = self.responder.people[reply.author]
            worded = self.model.word(person, self.responder.seed, reply.message, said.message, history)
            reply = replace(
                reply,
                message=worded.message,
                source=worded.source,
                key=worded.key,
                cached=worded.cached,
                model_text=worded.model_text,
                rejected=worded.rejected,
                word_seconds=_since(started),
            )
        history += [("agent", said.message), ("coworker", reply.message)]
        return reply

    def _inbox(self) -> list[Said]:
        found = self._run(["inbox", "--people", self.people, "--since", str(self.since)])
        new = [Said(**(p | {"to": tuple(p["to"])})) for p in found if p["id"] not in self.heard]
        if found:
            self.since = max(self.since, max(p["create_at"] for p in found) - 1)
        return new

    def _post(self, reply: Reply) -> None:
        self._run(
            [
                "post",
                "--as",
                reply.author,
                "--channel",
                reply.channel_id,
                "--root",
                reply.root_id,
                "--message",
                reply.message,
            ]
        )

    def _run(self, args: list[str]) -> Any:
        result = self.sandbox.exec(
            [*COWORKERS_CLI, *args], user=READER, timeout=TIMEOUT_S, max_output=MAX_OUTPUT_BYTES
        )
        if not result.ok:
            raise SandboxError(
                f"coworkers {args[0]} failed (exit {result.exit_code}): {result.output.strip()[-300:]}"
            )
        try:
            return json.loads(result.output.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise SandboxError(
                f"coworkers {args[0]} printed no JSON: {result.output.strip()[-300:]}"
            ) from None
