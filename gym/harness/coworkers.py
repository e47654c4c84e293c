"""Coworkers who answer the agent in chat and by mail, reproducibly (the task's `coworkers:`, gym.tasks.Coworker).

The clock is the agent's tool calls, not wall time: after each call the session reads what was
said to a coworker (only after a chat call that posts and names one of them, a mail sent, or a
shell call) and posts each reply once its delay, counted in calls, has passed. A mail is answered
by mail, in its thread, from the coworker's own address. Which rule answers is decided by the
message; which phrasing and which delay by a hash of (task, person, message), so every rollout
of a group that says the same thing hears the same reply at the same call, and a replay of the
same calls hears them again. The rules stay here on the host; in the sandbox a small CLI
per app (mcp_wrappers.chat.coworkers, mcp_wrappers.mail.coworkers, run as the grader) reads what
reached them and writes as the person.
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

READER = "grader"  # may read the chat admin token and the mail master password; the agent may not
# One CLI per app the coworkers listen on, the same two commands (inbox, post) in each.
CHAT_COWORKERS = ["/opt/egym/venv/bin/python3", "-I", "-m", "mcp_wrappers.chat.coworkers"]
MAIL_COWORKERS = ["/opt/egym/venv/bin/python3", "-I", "-m", "mcp_wrappers.mail.coworkers"]
TIMEOUT_S = 30
MAX_OUTPUT_BYTES = 4 << 20
# The calls that can say something to a coworker, after which the app is read: the chat app's
# posting tools whose arguments name one of them, the mail app's sending tools (a reply names a
# message, not a person), and the shell (its curl, whatever it names) for both.
# Reading, listing and searching say nothing. A message the filter misses (a channel given by id)
# is heard at the next read, a little late, never lost.
POSTING_TOOLS = re.compile(r"chat\.(post|send|reply|attach).*")
MAIL_SENDING_TOOLS = re.compile(r"mail\.(send_message|reply|forward)")
SHELL_TOOLS = ("bash",)


@dataclass(frozen=True)
class Said:
    """A post addressed to one or more coworkers (in a DM or group with them, or naming them with @), or a
    mail that reached their mailbox (channel `mail:ADDRESS`, `to` their usernames)."""

    id: str
    channel_id: str
    channel: str
    root_id: str
    user: str
    message: str
    create_at: int
    to: tuple[str, ...]
    subject: str = ""  # mail only


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
    reply_to: str = ""  # mail only: the address answered, and the subject
    subject: str = ""
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


def _re(subject: str) -> str:
    return subject if subject.casefold().startswith("re:") else f"Re: {subject}"


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
                    reply_to=said.user if said.channel.startswith("mail:") else "",
                    subject=_re(said.subject) if said.channel.startswith("mail:") else "",
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
        apps: tuple[str, ...] = ("chat",),
        since_ms: int | None = None,
        model: CoworkerModel | None = None,
    ):
        self.sandbox = sandbox
        self.responder = Responder(coworkers, seed)
        self.model = model
        # What each person and the agent said in each conversation, for the model's context.
        self.history: dict[tuple[str, str], list[tuple[str, str]]] = {}
        # Who listens where: everyone in chat, by username; by mail, whoever has an address.
        self.listening = {"chat": sorted(self.responder.people)}
        self.addresses = {c.email.lower(): c.username for c in coworkers if c.email}
        if self.addresses:
            self.listening["mail"] = sorted(self.addresses)
        self.listening = {app: people for app, people in self.listening.items() if app in apps}
        # A username or a part of it ("hannah", "schulz"): how a call's arguments may name them.
        self.names = {n for u in self.responder.people for n in (u, *u.split(".")) if len(n) >= 3}
        # Posts and mail from before the episode (the chat and mail files' history) are never answered.
        started = since_ms if since_ms is not None else int(time.time() * 1000)
        self.since = dict.fromkeys(self.listening, started)
        self.calls = 0
        self.heard: set[str] = set()
        self.pending: list[Reply] = []
        self.log: list[dict[str, Any]] = []
        self.failed = False

    def may_say_something(self, tool: str, arguments: str) -> list[str]:
        """The apps to read after this call: the ones it may have said something to a coworker through."""
        if tool in SHELL_TOOLS:
            return list(self.listening)
        text = arguments.casefold()
        if POSTING_TOOLS.fullmatch(tool) and any(name in text for name in self.names):
            return [app for app in self.listening if app == "chat"]
        return [app for app in self.listening if app == "mail" and MAIL_SENDING_TOOLS.fullmatch(tool)]

    def after_call(self, tool: str, arguments: str = "") -> None:
        """Advance the clock by one tool call: read what was said if the call could say something, post what is due.

        A failure to read or post is logged (`error`) and ends the coworkers for this episode, never the episode.
        """
        self.calls += 1
        if self.failed:
            return
        try:
            for app in self.may_say_something(tool, arguments):
                started = time.monotonic()
                new = self._inbox(app)
                self.log.append(
                    {"call": self.calls, "read": len(new), "app": app, "seconds": _since(started)}
                )
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
            # Worded's fields are Reply's.
            reply = replace(reply, **asdict(worded), word_seconds=_since(started))
        history += [("agent", said.message), ("coworker", reply.message)]
        return reply

    def _inbox(self, app: str) -> list[Said]:
        args = ["inbox", "--people", ",".join(self.listening[app]), "--since", str(self.since[app])]
        if app == "mail":  # people by their usernames, as the rules know them
            found = [
                p | {"to": [self.addresses[a.lower()] for a in p["to"]]}
                for p in self._run([*MAIL_COWORKERS, *args])
            ]
        else:
            found = self._run([*CHAT_COWORKERS, *args])
        new = [Said(**(p | {"to": tuple(p["to"])})) for p in found if p["id"] not in self.heard]
        if found:
            self.since[app] = max(self.since[app], max(p["create_at"] for p in found) - 1)
        return new

    def _post(self, reply: Reply) -> None:
        if reply.channel.startswith("mail:"):
            person = self.responder.people[reply.author]
            thread = " ".join(dict.fromkeys(i for i in (reply.root_id, reply.answers) if i))
            self._run(
                [
                    *MAIL_COWORKERS,
                    *("post", "--as", person.email, "--to", reply.reply_to, "--subject", reply.subject),
                    *("--in-reply-to", reply.answers, "--references", thread, "--message", reply.message),
                ]
            )
            return
        self._run(
            [
                *CHAT_COWORKERS,
                *("post", "--as", reply.author, "--channel", reply.channel_id),
                *("--root", reply.root_id, "--message", reply.message),
            ]
        )

    def _run(self, command: list[str]) -> Any:
        """One CLI command as the grader; its last line of output as JSON."""
        what = f"{command[3]} {command[4]}"  # mcp_wrappers.chat.coworkers inbox
        result = self.sandbox.exec(command, user=READER, timeout=TIMEOUT_S, max_output=MAX_OUTPUT_BYTES)
        if not result.ok:
            raise SandboxError(f"{what} failed (exit {result.exit_code}): {result.output.strip()[-300:]}")
        try:
            return json.loads(result.output.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise SandboxError(f"{what} printed no JSON: {result.output.strip()[-300:]}") from None
