"""Everything the agent wrote that can assert a value: its final answer, the chat posts it added or
edited during the episode (channels and direct messages), and the documents the rubric reads.

A place is named the way rubric items name it in `where`:

    answer             the final answer
    #sales             a channel's posts (a bare `sales` means the same)
    dm:alice,bob       the direct messages between alice and bob (any order)
    mail:lena@client.example   the mail the agent sent to that address (subject and text)
    file:reports/q1.xlsx   a document in /workspace (spreadsheet rows and paragraphs are lines)
    sql:SELECT status FROM expense_claims WHERE id = 7
                       what the agent recorded in the database (each row a line): a decision
                       is a claim like any other, and a wrong one is charged
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from core.trajectory import Trajectory
from grader.chatstate import ChatSnapshot, dm_name
from grader.errors import StateError
from grader.mailstate import same_address
from grader.probe import Probe, workspace_path

ANSWER = "answer"
TEXT_FILES = (".txt", ".md", ".csv", ".json", ".tsv", ".log", ".html", ".eml")
MAX_FILE_CHARS = 2_000_000  # a document is read whole for its claims; past this it is cut


@dataclass(frozen=True)
class Writing:
    """One piece of the agent's writing and where it stands."""

    place: str
    text: str


def place(where: str) -> str:
    """A `where` as the canonical place name: 'answer', '#sales', 'dm:a,b' or 'file:/workspace/x'."""
    where = where.strip()
    if where == ANSWER:
        return ANSWER
    if where.startswith("file:"):
        return "file:" + workspace_path(where[5:])
    if where.startswith("sql:"):
        return "sql:" + where[4:].strip()
    if where.startswith("mail:"):
        return "mail:" + where[5:].strip().lower()
    channel = dm_name(where)
    return channel if channel.startswith("dm:") else "#" + channel


def prompt(trajectory: Trajectory | None) -> str:
    """The task's prompt: the first user message (its values are never charged)."""
    if trajectory is None:
        return ""
    return next((m.content for m in trajectory.messages if m.role == "user" and m.content), "") or ""


def answer(trajectory: Trajectory | None) -> list[Writing]:
    text = (trajectory.final_answer or "") if trajectory else ""
    return [Writing(ANSWER, text)] if text else []


def _chat_place(channel: str) -> str:
    return channel if channel.startswith("dm:") else "#" + channel


def posts(probe: Probe, author: str | None) -> list[Writing]:
    """Posts added or edited during the episode (by `author` when given)."""
    changes = probe.changes()
    if changes is not None:  # a baseline: its chat part lists the new posts (none without a chat app)
        return [
            Writing(_chat_place(p.channel), p.message)
            for p in changes.posts
            if p.change in ("added", "edited") and (author is None or p.user == author)
        ]
    if author is None:
        return []  # no baseline to tell new posts from old ones, and no author to go by
    snap: ChatSnapshot = probe.chat()
    return [Writing(_chat_place(p.channel), p.message) for p in snap.posts if p.user == author]


def mail(probe: Probe, author: str | None) -> list[Writing]:
    """The mail the agent (`author`: an address, or its part before the @) sent during the episode, once
    per recipient (Bcc included): a value mailed to three people is asserted to three. None without
    a mail app."""
    changes = probe.changes()
    if changes is None or "mail" not in changes.sources or author is None:
        return []
    return [
        Writing(f"mail:{recipient}", f"{m.subject}\n{m.body}")
        for m in probe.mail().sent_by(author)
        for recipient in m.recipients
    ]


def seeded_mail(probe: Probe, author: str | None) -> str:
    """The text of the mail in the agent's mailbox that it did not send (the customer's question): the
    agent may quote it back without being charged."""
    changes = probe.changes()
    if changes is None or "mail" not in changes.sources or author is None:
        return ""
    snap = probe.mail()
    mine = [
        m for m in snap.messages if same_address(m.account, author) and not same_address(m.sender, author)
    ]
    return "\n".join(f"{m.subject}\n{m.body}" for m in mine)


def seeded_direct_messages(probe: Probe, places: set[str]) -> str:
    """The text of the direct messages in `places` that were there before the episode (the question
    a coworker asked): the agent may quote them back without being charged."""
    wanted = {p for p in places if p.startswith("dm:")}
    if not wanted:
        return ""
    changes = probe.changes()
    if changes is not None and "chat" not in changes.sources:
        return ""
    new = {p.id for p in changes.posts if p.change != "deleted"} if changes is not None else set()
    snap = probe.chat()
    return "\n".join(p.message for p in snap.posts if p.channel in wanted and p.id not in new)


def _cell_text(cell: dict[str, Any]) -> str:
    value = cell.get("value")
    return cell.get("text") or ("" if value is None else str(value))


def document_lines(doc: dict[str, Any]) -> str:
    """A document read by LibreOffice as lines: a spreadsheet row per line, cells joined by ' | '."""
    if doc.get("kind") == "spreadsheet":
        lines = []
        for sheet in doc.get("sheets") or []:
            rows: dict[int, list[tuple[str, str]]] = {}
            for ref, cell in (sheet.get("cells") or {}).items():
                column = ref.rstrip("0123456789")
                row = ref[len(column) :]
                if row.isdigit():
                    rows.setdefault(int(row), []).append((column.rjust(3), _cell_text(cell)))
            lines += [" | ".join(text for _, text in sorted(cells)) for _, cells in sorted(rows.items())]
        return "\n".join(lines)
    lines = [p.get("text", "") for p in doc.get("paragraphs") or []]
    lines += [" | ".join(map(str, row)) for table in doc.get("tables") or [] for row in table]
    return "\n".join(lines)


def document(probe: Probe, where: str) -> list[Writing]:
    """A document's text (none when it is absent: the items that expect it fail on their own)."""
    path = where[len("file:") :]
    if posixpath.splitext(path)[1].lower() in TEXT_FILES:
        data = probe.file(path)
        text = "" if data is None else data[:MAX_FILE_CHARS].decode("utf-8", "replace")
    else:
        doc = probe.document(path)
        if "error" in doc:
            if "no such file" in str(doc["error"]):
                return []
            raise StateError(f"{path}: cannot read: {doc['error']}")
        text = document_lines(doc)[:MAX_FILE_CHARS]
    return [Writing(where, text)] if text else []


def database(probe: Probe, where: str) -> list[Writing]:
    """The rows a `sql:` place selects from the final state, one line each (none when the query fails:
    the agent dropped what it reads, and the items that expect it fail on their own)."""
    rows = probe.sql(where[len("sql:") :])
    text = "\n".join(" | ".join("" if v is None else str(v) for v in row.values()) for row in rows)
    return [Writing(where, text)] if text else []
