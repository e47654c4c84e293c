"""The mail MCP server: an e-mail client's tools over IMAP and SMTP, as the agent's own account.

Run: `python3 -m mcp_wrappers.mail` (stdio) as OS user `agent`; the account's address and password
come from ~/.config/egym/mail.env (written by mcp_wrappers.mail.load). A message is named
`FOLDER/UID` (`INBOX/3`), as list_messages and search_messages show it. Sending puts a copy in Sent,
as a mail client does; reading marks a message read.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_wrappers.mail import AGENT_ENV_FILE
from mcp_wrappers.mail.client import Fetched, MailClient, MailError, Parsed, compose, parse
from mcp_wrappers.toolkit import READ_ONLY, make_server, run_stdio, tool_errors, writes

log = logging.getLogger("egym.mail")
WORKSPACE = Path("/workspace")
MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024
INSTRUCTIONS = (
    "Your company e-mail. Messages are named FOLDER/UID (e.g. INBOX/3): list_messages or search_messages "
    "first, then read_message. Replies keep the thread; attachments come from and go to /workspace."
)
_client: MailClient | None = None
_me: tuple[str, str] = ("", "")  # (address, name)

MessageRef = Annotated[str, Field(description="A message as listed: FOLDER/UID, e.g. 'INBOX/3'.")]
Addresses = Annotated[list[str], Field(description="E-mail addresses, e.g. ['raj.patel@acme.example'].")]
Paths = Annotated[list[str], Field(description="Files in /workspace to attach, e.g. ['quote.xlsx'].")]


def client() -> MailClient:
    global _client, _me
    if _client is None:
        try:
            env = dict(line.split("=", 1) for line in AGENT_ENV_FILE.read_text().splitlines() if "=" in line)
        except OSError:
            raise ToolError("no mail account: this workstation has none configured") from None
        _me = (env["MAIL_ADDRESS"], env.get("MAIL_NAME", ""))
        _client = MailClient(env["MAIL_ADDRESS"], env["MAIL_PASSWORD"])
    return _client


tool = tool_errors(MailError, log)


def _ref(message: str) -> tuple[str, int]:
    folder, _, uid = message.strip().rpartition("/")
    if not folder or not uid.isdigit():
        raise ToolError(f"{message!r} is no message name: use FOLDER/UID as listed, e.g. 'INBOX/3'")
    return folder, int(uid)


def _fetch(message: str) -> tuple[str, Fetched, Parsed]:
    folder, uid = _ref(message)
    found = client().fetch(folder, [uid])
    if not found:
        raise ToolError(f"no message {folder}/{uid}; list_messages(folder={folder!r}) shows what is there")
    return folder, found[0], parse(found[0].raw)


def _line(folder: str, fetched: Fetched, p: Parsed) -> str:
    who = f"{p.sender_name} <{p.sender}>" if p.sender_name else p.sender
    marks = [
        m
        for m, on in (("unread", "\\Seen" not in fetched.flags), ("flagged", "\\Flagged" in fetched.flags))
        if on
    ]
    if p.attachments:
        marks.append(f"{len(p.attachments)} attachment{'s' * (len(p.attachments) > 1)}")
    extra = f"  ({', '.join(marks)})" if marks else ""
    return f"[{folder}/{fetched.uid}] {p.date[:16].replace('T', ' ')}  {who}  {p.subject!r}{extra}"


def _attachments(paths: list[str]) -> list[tuple[str, bytes]]:
    out = []
    root = WORKSPACE.resolve()
    for path in paths:
        candidate = Path(path.strip())
        full = (candidate if candidate.is_absolute() else root / candidate).resolve()
        if root not in full.parents:
            raise ToolError(f"'{path}' is outside /workspace; only files in /workspace can be attached")
        if not full.is_file():
            raise ToolError(f"no file '{path}' in /workspace")
        if full.stat().st_size > MAX_ATTACHMENT_BYTES:
            raise ToolError(f"'{full.name}' is larger than 25 MB")
        out.append((full.name, full.read_bytes()))
    return out


def _send(
    to: list[str],
    subject: str,
    body: str,
    *,
    cc: list[str] = (),
    bcc: list[str] = (),
    attachments: list[tuple[str, bytes]] = (),
    reply_to: Parsed | None = None,
) -> str:
    """Compose, submit as the agent, keep a copy in Sent."""
    c = client()
    address, name = _me
    refs = None
    if reply_to is not None:
        refs = " ".join(filter(None, [reply_to.references, reply_to.message_id]))
    msg = compose(
        sender=f"{name} <{address}>" if name else address,
        to=list(to),
        cc=list(cc),
        bcc=list(bcc),
        subject=subject,
        body=body,
        date=dt.datetime.now(dt.UTC),
        in_reply_to=reply_to.message_id if reply_to is not None else None,
        references=refs,
        attachments=list(attachments),
    )
    if not (to or cc or bcc):
        raise ToolError("no recipient: give `to` (and optionally cc, bcc)")
    refused = c.send(msg)  # smtplib leaves the Bcc header out of what it sends
    c.append(
        "Sent", msg.as_bytes(), flags=["\\Seen"], when=dt.datetime.now(dt.UTC)
    )  # the sender's copy keeps it
    told = [*to, *cc, *bcc]
    note = f" Refused: {', '.join(refused)}." if refused else ""
    return f"Sent {subject!r} to {', '.join(a for a in told if a not in refused)}.{note}"


@tool
def list_folders() -> str:
    """List your mail folders with how many messages each holds and how many are unread."""
    c = client()
    lines = []
    for folder in c.folders():
        total = len(c.search(folder, "ALL"))
        unread = len(c.search(folder, "UNSEEN"))
        lines.append(f"{folder}: {total} message(s), {unread} unread")
    return "\n".join(lines)


@tool
def list_messages(
    folder: Annotated[str, Field(description="A folder, e.g. 'INBOX', 'Sent', 'Archive'.")] = "INBOX",
    unread_only: Annotated[bool, Field(description="Only messages not yet read.")] = False,
    limit: Annotated[int, Field(description="Newest first, at most this many.", ge=1, le=200)] = 30,
) -> str:
    """List the messages of a folder, newest first: name (FOLDER/UID), date, sender, subject, marks.
    Example: list_messages(folder="INBOX", unread_only=True)."""
    c = client()
    uids = c.search(folder, "UNSEEN" if unread_only else "ALL")[-limit:]
    found = [(f, parse(f.raw)) for f in c.fetch(folder, uids)]
    if not found:
        return f"No {'unread ' if unread_only else ''}messages in {folder}."
    return "\n".join(_line(folder, f, p) for f, p in reversed(found))


@tool
def search_messages(
    query: Annotated[
        str, Field(description="Words to find in the subject, body or addresses, e.g. 'quote'.")
    ],
    folder: Annotated[str, Field(description="One folder; empty: every folder.")] = "",
    limit: Annotated[int, Field(ge=1, le=200)] = 30,
) -> str:
    """Search your mail for text (subject, body, sender, recipients). Example: search_messages(query="invoice 1042")."""
    c = client()
    if not query.strip():
        raise ToolError("give some words to search for")
    lines = []
    for name in [folder] if folder.strip() else c.folders():
        uids = c.search(name, "TEXT", '"' + query.strip().replace('"', "") + '"')
        lines += [_line(name, f, parse(f.raw)) for f in c.fetch(name, uids[-limit:])]
    return "\n".join(lines[-limit:]) if lines else f"No message matches {query!r}."


@tool
def read_message(message: MessageRef) -> str:
    """Read a message: headers, text and attachments (save_attachments puts them in /workspace).
    Marks it read. Example: read_message(message="INBOX/3")."""
    folder, fetched, p = _fetch(message)
    if "\\Seen" not in fetched.flags:
        client().set_flags(folder, fetched.uid, "\\Seen")
    head = [
        f"Message: {folder}/{fetched.uid}",
        f"From: {p.sender_name} <{p.sender}>" if p.sender_name else f"From: {p.sender}",
        f"To: {', '.join(p.to)}",
        *([f"Cc: {', '.join(p.cc)}"] if p.cc else []),
        f"Date: {p.date}",
        f"Subject: {p.subject}",
        *(
            [f"Attachments: {', '.join(f'{a.name} ({len(a.data):,} bytes)' for a in p.attachments)}"]
            if p.attachments
            else []
        ),
    ]
    return "\n".join(head) + "\n\n" + p.body


@tool
def send_message(
    to: Addresses,
    subject: Annotated[str, Field(description="The subject line.")],
    body: Annotated[str, Field(description="The text of the message.")],
    cc: Addresses = [],  # noqa: B006 - the SDK reads defaults for the schema; never mutated
    bcc: Addresses = [],  # noqa: B006
    attachments: Paths = [],  # noqa: B006
) -> str:
    """Send a new message (a copy goes to Sent). Example: send_message(to=["raj.patel@acme.example"],
    subject="Q1 report", body="Attached.", attachments=["reports/q1.xlsx"])."""
    return _send(to, subject, body, cc=cc, bcc=bcc, attachments=_attachments(attachments))


@tool
def reply(
    message: MessageRef,
    body: Annotated[str, Field(description="Your answer; the original is not quoted.")],
    reply_all: Annotated[bool, Field(description="Also to everyone else in To and Cc.")] = False,
    attachments: Paths = [],  # noqa: B006
) -> str:
    """Reply to a message, in its thread. Example: reply(message="INBOX/3", body="Thanks, done.")."""
    _, _, p = _fetch(message)
    me = client().address
    to = [p.sender] if p.sender != me else p.to
    cc = [a for a in [*p.to, *p.cc] if a != me and a not in to] if reply_all else []
    subject = p.subject if p.subject.lower().startswith("re:") else f"Re: {p.subject}"
    return _send(to, subject, body, cc=cc, attachments=_attachments(attachments), reply_to=p)


@tool
def forward(
    message: MessageRef,
    to: Addresses,
    body: Annotated[str, Field(description="Your note above the forwarded message.")] = "",
) -> str:
    """Forward a message with its attachments. Example: forward(message="INBOX/3", to=["ola.berg@acme.example"])."""
    _, _, p = _fetch(message)
    subject = p.subject if p.subject.lower().startswith("fwd:") else f"Fwd: {p.subject}"
    quoted = f"{body}\n\n---------- Forwarded message ----------\nFrom: {p.sender}\nDate: {p.date}\nSubject: {p.subject}\n\n{p.body}"
    return _send(to, subject, quoted.strip(), attachments=[(a.name, a.data) for a in p.attachments])


@tool
def move_message(
    message: MessageRef,
    folder: Annotated[str, Field(description="Where to, e.g. 'Archive'; created when missing.")],
) -> str:
    """Move a message to another folder (e.g. file it in Archive). Example: move_message(message="INBOX/3", folder="Archive")."""
    source, uid = _ref(message)
    if not client().fetch(source, [uid]):
        raise ToolError(f"no message {source}/{uid}")
    client().move(source, uid, folder.strip())
    return f"Moved {source}/{uid} to {folder.strip()}."


@tool
def save_attachments(
    message: MessageRef,
    folder: Annotated[str, Field(description="A folder in /workspace; empty: /workspace itself.")] = "",
) -> str:
    """Save a message's attachments into /workspace, where the office tools open them.
    Example: save_attachments(message="INBOX/3", folder="incoming")."""
    _, _, p = _fetch(message)
    if not p.attachments:
        return "The message has no attachments."
    root = WORKSPACE.resolve()
    target = (root / folder.strip()).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"'{folder}' is outside /workspace")
    target.mkdir(parents=True, exist_ok=True)
    saved = []
    for a in p.attachments:
        path = target / Path(a.name).name  # never a path the sender chose
        path.write_bytes(a.data)
        saved.append(str(path.relative_to(root)))
    return f"Saved {', '.join(saved)} in /workspace."


TOOLS = {
    "list_folders": READ_ONLY,
    "list_messages": READ_ONLY,
    "search_messages": READ_ONLY,
    "read_message": writes(destructive=False, idempotent=True),  # marks it read
    "send_message": writes(destructive=False, idempotent=False),
    "reply": writes(destructive=False, idempotent=False),
    "forward": writes(destructive=False, idempotent=False),
    "move_message": writes(destructive=False, idempotent=True),
    "save_attachments": writes(destructive=True, idempotent=True),  # overwrites a file of the same name
}


def _close() -> None:
    if _client is not None:
        _client.close()


def build_server() -> MCPServer:
    """The tools are this module's functions (docstring = description); answers are text only."""
    return make_server("mail", INSTRUCTIONS, sys.modules[__name__], TOOLS, _close, structured_output=False)


def main() -> None:
    run_stdio(build_server())
