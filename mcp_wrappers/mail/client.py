"""The mail app's one client, on the standard library: IMAP (imaplib) to read and file mail,
SMTP submission (smtplib) to send it, `email` (policy.default) to write and read messages.

Used by the loader and the snapshot (as any account, through Dovecot's master user) and by the
agent's MCP server (as the agent, with its own password).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email
import hashlib
import imaplib
import mimetypes
import re
import smtplib
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import default as POLICY
from email.utils import format_datetime, getaddresses, parsedate_to_datetime

from mcp_wrappers.mail import IMAP_PORT, MASTER_USER, SMTP_PORT

HOST = "127.0.0.1"
_LIST = re.compile(rb'\((?P<flags>[^)]*)\) (?:"[^"]*"|NIL) (?P<name>.+)$')
_FETCH = re.compile(rb"UID (?P<uid>\d+)|FLAGS \((?P<flags>[^)]*)\)")


class MailError(Exception):
    """A server refused or failed: the message says what, for a person or a model."""


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _check(typ: str, data: list, what: str) -> list:
    if typ != "OK":
        detail = b" ".join(d for d in data if isinstance(d, bytes)).decode(errors="replace")
        raise MailError(f"{what}: {detail or typ}")
    return data


@dataclass(frozen=True)
class Attached:
    name: str
    content_type: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Parsed:
    """A message as people read it."""

    sender: str
    sender_name: str
    to: list[str]
    cc: list[str]
    subject: str
    date: str  # ISO 8601, "" when the message has no readable Date
    message_id: str
    in_reply_to: str
    references: str
    body: str
    attachments: list[Attached] = field(default_factory=list)


def _addresses(msg: EmailMessage, header: str) -> list[str]:
    return [addr.lower() for _, addr in getaddresses(msg.get_all(header, [])) if addr]


def parse(raw: bytes) -> Parsed:
    msg = email.message_from_bytes(raw, policy=POLICY)
    assert isinstance(msg, EmailMessage)
    name, sender = (getaddresses(msg.get_all("From", [])) or [("", "")])[0]
    try:
        date = parsedate_to_datetime(str(msg["Date"])).isoformat() if msg["Date"] else ""
    except (TypeError, ValueError):
        date = ""
    part = msg.get_body(preferencelist=("plain", "html"))
    body = part.get_content().replace("\r\n", "\n") if part is not None else ""
    if part is not None and part.get_content_type() == "text/html":
        body = re.sub(r"<[^>]+>", " ", body)  # a reader sees the text, not the markup
    attachments = [
        Attached(a.get_filename() or "attachment", a.get_content_type(), a.get_payload(decode=True) or b"")
        for a in msg.iter_attachments()
    ]
    return Parsed(
        sender=sender.lower(),
        sender_name=name,
        to=_addresses(msg, "To"),
        cc=_addresses(msg, "Cc"),
        subject=str(msg["Subject"] or ""),
        date=date,
        message_id=str(msg["Message-ID"] or "").strip(),
        in_reply_to=str(msg["In-Reply-To"] or "").strip(),
        references=str(msg["References"] or "").strip(),
        body=body.strip(),
        attachments=attachments,
    )


def compose(
    *,
    sender: str,
    to: list[str],
    subject: str,
    body: str,
    date: dt.datetime,
    cc: list[str] = (),
    bcc: list[str] = (),
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | None = None,
    attachments: list[tuple[str, bytes]] = (),
) -> EmailMessage:
    """A message as a mail client writes it; `sender` may carry a display name ('Dana Lee <dana@x>')."""
    msg = EmailMessage(policy=POLICY)
    msg["From"] = sender
    if to:
        msg["To"] = ", ".join(to)
    if cc:
        msg["Cc"] = ", ".join(cc)
    if bcc:
        msg["Bcc"] = ", ".join(bcc)  # smtplib sends to them and leaves the header out
    msg["Subject"] = subject
    msg["Date"] = format_datetime(date if date.tzinfo else date.replace(tzinfo=dt.UTC))
    msg["Message-ID"] = message_id or email.utils.make_msgid(domain=sender.rpartition("@")[2].strip(">"))
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = references or in_reply_to
    msg.set_content(body)
    for name, data in attachments:
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        main, _, sub = kind.partition("/")
        msg.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return msg


@dataclass(frozen=True)
class Fetched:
    uid: int
    flags: list[str]
    raw: bytes


class MailClient:
    """One account's IMAP session (opened on first use) and SMTP submission."""

    def __init__(self, address: str, password: str, *, master: bool = False):
        self.address = address.lower()
        self._login = f"{self.address}*{MASTER_USER}" if master else self.address
        self._password = password
        self._imap: imaplib.IMAP4 | None = None
        self._selected: tuple[str, bool] | None = None

    @property
    def imap(self) -> imaplib.IMAP4:
        if self._imap is None:
            try:
                imap = imaplib.IMAP4(HOST, IMAP_PORT, timeout=30)
            except OSError as exc:
                raise MailError(f"the mail server (IMAP) is not reachable: {exc}") from None
            try:
                imap.login(self._login, self._password)
            except imaplib.IMAP4.error as exc:
                raise MailError(f"IMAP login as {self.address} failed: {exc}") from None
            self._imap = imap
        return self._imap

    def close(self) -> None:
        if self._imap is not None:
            with contextlib.suppress(OSError, imaplib.IMAP4.error):
                self._imap.logout()
            self._imap, self._selected = None, None

    def folders(self) -> list[str]:
        names = []
        for line in _check(*self.imap.list(), "LIST"):
            match = _LIST.match(line or b"")
            if match:
                names.append(match["name"].decode().strip('"'))
        return names

    def select(self, folder: str, *, readonly: bool = True) -> int:
        """Open `folder`; how many messages it holds. MailError naming the folders when it does not exist."""
        typ, data = self.imap.select(_quoted(folder), readonly=readonly)
        if typ != "OK":
            raise MailError(f"no folder {folder!r} (folders: {', '.join(self.folders())})")
        self._selected = (folder, readonly)
        return int(data[0] or 0)

    def search(self, folder: str, *criteria: str) -> list[int]:
        self.select(folder)
        data = _check(*self.imap.uid("SEARCH", *(criteria or ("ALL",))), "SEARCH")
        return [int(n) for n in (data[0] or b"").split()]

    def fetch(self, folder: str, uids: list[int], *, readonly: bool = True) -> list[Fetched]:
        """The messages' flags and bytes; BODY.PEEK leaves them unread."""
        if not uids:
            return []
        self.select(folder, readonly=readonly)
        data = _check(*self.imap.uid("FETCH", ",".join(map(str, uids)), "(UID FLAGS BODY.PEEK[])"), "FETCH")
        out = []
        for part in data:
            if not isinstance(part, tuple):
                continue
            head, raw = part
            uid = flags = None
            for m in _FETCH.finditer(head):
                uid = int(m["uid"]) if m["uid"] else uid
                flags = m["flags"].decode().split() if m["flags"] is not None else flags
            if uid is not None:  # \Recent belongs to a session, not to the message
                out.append(Fetched(uid, [f for f in flags or [] if f != "\\Recent"], raw))
        return sorted(out, key=lambda f: f.uid)

    def append(self, folder: str, raw: bytes, *, flags: list[str], when: dt.datetime) -> None:
        if folder not in self.folders():
            _check(*self.imap.create(_quoted(folder)), f"CREATE {folder}")
        stamp = imaplib.Time2Internaldate(when if when.tzinfo else when.replace(tzinfo=dt.UTC))
        _check(*self.imap.append(_quoted(folder), f"({' '.join(flags)})", stamp, raw), f"APPEND {folder}")

    def set_flags(self, folder: str, uid: int, flags: str, *, add: bool = True) -> None:
        self.select(folder, readonly=False)
        _check(*self.imap.uid("STORE", str(uid), "+FLAGS" if add else "-FLAGS", f"({flags})"), "STORE")

    def move(self, folder: str, uid: int, target: str) -> None:
        if target not in self.folders():
            _check(*self.imap.create(_quoted(target)), f"CREATE {target}")
        self.select(folder, readonly=False)
        _check(*self.imap.uid("MOVE", str(uid), _quoted(target)), f"MOVE to {target}")

    def send(self, msg: EmailMessage) -> list[str]:
        """Submit `msg` as this account (SMTP AUTH on 587); the addresses the server refused."""
        try:
            with smtplib.SMTP(HOST, SMTP_PORT, timeout=30) as smtp:
                smtp.login(self.address, self._password)
                refused = smtp.send_message(msg)
        except smtplib.SMTPRecipientsRefused as exc:
            why = next(iter(exc.recipients.values()))[1].decode(errors="replace")
            raise MailError(f"no recipient was accepted ({why})") from None
        except smtplib.SMTPAuthenticationError as exc:
            raise MailError(
                f"SMTP login as {self.address} failed: {exc.smtp_error.decode(errors='replace')}"
            ) from None
        except smtplib.SMTPException as exc:
            raise MailError(f"the mail server refused the message: {exc}") from None
        except OSError as exc:
            raise MailError(f"the mail server (SMTP) is not reachable: {exc}") from None
        return sorted(refused)
