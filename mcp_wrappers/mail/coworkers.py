"""The mail side of simulated coworkers: `python3 -I -m mcp_wrappers.mail.coworkers inbox|post ...`.

Run by the host's coworker session as OS user `grader`, which may read Dovecot's master password
(/egym/secrets/mail-master) and the account list. What a coworker says is decided on the host, from
rules the sandbox never holds; this module only reads the mail that reached them and sends their
replies as themselves. People are named by their mail address, as the world's mail accounts are.

    inbox --people dana.lee@acme.example,raj.patel@acme.example --since MS
        prints one JSON list, by (create_at, id): every message that reached one of those people's
        mailboxes (any folder but Sent, Drafts and Trash) through the mail server after MS (epoch ms)
        and was not written by one of them, once per Message-ID:
        [{"id", "channel_id", "channel", "root_id", "user", "message", "create_at", "to", "subject"}]
        - id: its Message-ID; root_id: the first of its References (else its In-Reply-To), "" when
          it starts a thread;
        - to: the people whose mailboxes it reached (To, Cc or Bcc alike), sorted; channel_id: the
          first of them (a mail conversation's channel is the mailbox), channel: "mail:" + that;
        - user: the From address; message: "Subject: ...\\n\\n" + the plain-text body;
        - create_at: its arrival (IMAP INTERNALDATE, set by the server on delivery, whole seconds)
          in epoch ms. A message counts as after MS when its second ends after MS, so one that
          arrived in the same second as MS is not missed (it is returned again; the host keeps ids).
        Only mail delivered by the server (it carries Postfix's Received header) counts: the mail
        files' messages, put in the mailboxes at the start with the dates they give, never do.
    post --as dana.lee@acme.example --to sender@acme.example --subject S [--in-reply-to ID]
         [--references "ID ..."] --message TEXT
        sends the message as that person (SMTP submission, logged in through Dovecot's master user,
        so Postfix's journal and sender checks see that person), keeps a copy in their Sent folder
        as the agent's mail client does, waits until it is delivered, prints {"id", "create_at"}.

Both wait for Postfix's queue to drain first, so what was just submitted has been delivered.
Errors: one line on stderr, exit 1 (no master password, an address with no mailbox, a server error).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from typing import Any

from mcp_wrappers.mail import ACCOUNTS_FILE, MASTER_FILE, MASTER_USER
from mcp_wrappers.mail.client import MailClient, MailError, compose, parse
from mcp_wrappers.mail.snapshot import settle

SKIPPED = {"sent", "drafts", "trash"}  # what a person wrote or threw away, not what reached them
_STAMP = re.compile(rb'UID (?P<uid>\d+)|INTERNALDATE "(?P<date>[^"]+)"')


class CoworkerError(Exception):
    pass


def _secret() -> str:
    try:
        return MASTER_FILE.read_text().strip()
    except OSError as exc:
        raise CoworkerError(f"no mail master password ({exc}); was a mail file loaded?") from None


def _accounts(addresses: list[str]) -> dict[str, str]:
    """Every account's address and name; CoworkerError naming any of `addresses` that has no mailbox."""
    try:
        listing = json.loads(ACCOUNTS_FILE.read_text())
    except (OSError, ValueError) as exc:
        raise CoworkerError(f"no mail accounts ({exc}); was a mail file loaded?") from None
    names = {a["address"].lower(): a.get("name", "") for a in listing["accounts"]}
    unknown = [a for a in addresses if a not in names]
    if unknown:
        raise CoworkerError(f"no mail account {', '.join(unknown)}")
    return names


def _as(address: str, secret: str) -> MailClient:
    """A session as `address` for IMAP and SMTP submission alike: the master login `ADDRESS*egym-master`
    (load.master_client logs in to IMAP only that way). Postfix's SASL (Dovecot) resolves it to the
    address, so the sender checks and the journal see that person."""
    return MailClient(f"{address}*{MASTER_USER}", secret)


def _arrivals(client: MailClient, folder: str, since: int) -> dict[int, int]:
    """UID -> arrival (epoch ms) of the messages of `folder` delivered by the server in a second ending after `since`."""
    day = (dt.datetime.fromtimestamp(since / 1000, dt.UTC) - dt.timedelta(days=1)).strftime("%d-%b-%Y")
    uids = client.search(folder, "SINCE", day, "HEADER", "Received", '""')  # SINCE: dates only
    if not uids:
        return {}
    typ, data = client.imap.uid("FETCH", ",".join(map(str, uids)), "(UID INTERNALDATE)")
    if typ != "OK":
        raise MailError(f"FETCH INTERNALDATE in {folder}: {data}")
    out = {}
    for line in data:
        head = line[0] if isinstance(line, tuple) else line
        uid = stamp = None
        for m in _STAMP.finditer(head or b""):
            uid = int(m["uid"]) if m["uid"] else uid
            stamp = m["date"].decode().strip() if m["date"] else stamp
        if uid is None or stamp is None:
            continue
        ms = int(dt.datetime.strptime(stamp, "%d-%b-%Y %H:%M:%S %z").timestamp()) * 1000
        if ms + 999 > since:
            out[uid] = ms
    return out


def inbox(people: list[str], since: int) -> list[dict[str, Any]]:
    _accounts(people)
    secret = _secret()
    settle()
    found: dict[str, dict[str, Any]] = {}
    for person in people:
        client = _as(person, secret)
        try:
            for folder in client.folders():
                if folder.lower() in SKIPPED:
                    continue
                arrivals = _arrivals(client, folder, since)
                for fetched in client.fetch(folder, sorted(arrivals)):
                    p = parse(fetched.raw)
                    if p.sender in people:
                        continue
                    mid = p.message_id or f"<{folder}.{fetched.uid}@{person}>"
                    refs = p.references.split() or p.in_reply_to.split()
                    said = found.setdefault(
                        mid,
                        {
                            "id": mid,
                            "channel_id": person,
                            "channel": f"mail:{person}",
                            "root_id": refs[0] if refs else "",
                            "user": p.sender,
                            "message": f"Subject: {p.subject}\n\n{p.body}",
                            "create_at": arrivals[fetched.uid],
                            "to": [],
                            "subject": p.subject,
                        },
                    )
                    if person not in said["to"]:
                        said["to"].append(person)
        finally:
            client.close()
    for said in found.values():
        said["to"].sort()
        said["channel_id"] = said["to"][0]
        said["channel"] = f"mail:{said['to'][0]}"
    return sorted(found.values(), key=lambda s: (s["create_at"], s["id"]))


def post_as(
    author: str, to: list[str], subject: str, message: str, in_reply_to: str, references: str
) -> dict[str, Any]:
    names = _accounts([author, *to])
    if not to:
        raise CoworkerError("no recipient: give --to")
    secret = _secret()
    now = dt.datetime.now(dt.UTC)
    name = names[author]
    msg = compose(
        sender=f"{name} <{author}>" if name else author,
        to=to,
        subject=subject,
        body=message,
        date=now,
        # References without In-Reply-To: the message answered is the last one referred to.
        in_reply_to=in_reply_to or (references.split() or [None])[-1],
        references=references or None,
    )
    client = _as(author, secret)
    try:
        refused = client.send(msg)
        if refused:
            raise CoworkerError(f"the mail server refused {', '.join(refused)}")
        client.append("Sent", msg.as_bytes(), flags=["\\Seen"], when=now)
    finally:
        client.close()
    settle()
    return {"id": str(msg["Message-ID"]), "create_at": int(now.timestamp() * 1000)}


def _addresses(value: str) -> list[str]:
    return [a.strip().lower() for a in value.split(",") if a.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcp_wrappers.mail.coworkers")
    commands = parser.add_subparsers(dest="command", required=True)
    read = commands.add_parser("inbox")
    read.add_argument("--people", required=True, help="mail addresses, comma-separated")
    read.add_argument("--since", type=int, required=True, help="epoch milliseconds")
    write = commands.add_parser("post")
    write.add_argument("--as", dest="author", required=True, help="the coworker's mail address")
    write.add_argument("--to", required=True, help="mail addresses, comma-separated")
    write.add_argument("--subject", required=True)
    write.add_argument("--in-reply-to", default="", help="the Message-ID answered")
    write.add_argument("--references", default="", help="the thread's Message-IDs, root first")
    write.add_argument("--message", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "inbox":
            result: Any = inbox(_addresses(args.people), args.since)
        else:
            result = post_as(
                args.author.strip().lower(),
                _addresses(args.to),
                args.subject,
                args.message,
                args.in_reply_to.strip(),
                args.references.strip(),
            )
    except (CoworkerError, MailError, OSError) as exc:
        print(f"coworkers: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
