"""Load the mail app's initial state: `python3 -I -m mcp_wrappers.mail.load accounts|messages DIR`.

Run as root by image/start, with DIR the overlay's mail folder (its *.yaml files, in name order,
in the format of mcp_wrappers.mail.mailfile):

- `accounts` (before the servers start: Postfix reads its tables once): the company's domains
  and mailboxes for Postfix, the accounts with fresh random passwords for Dovecot, the master
  password and the account list for the grader (/egym/secrets), the agent's own address and
  password for the agent (~agent/.config/egym/mail.env);
- `messages` (once they answer): every message APPENDed over IMAP into its mailbox's folder
  as the master user, with its date and flags.

A bad file fails with one line naming it and the problem (exit 1).
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import secrets
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from mcp_wrappers.mail import (
    ACCOUNTS_FILE,
    AGENT_ENV_FILE,
    DOVECOT_MASTER,
    DOVECOT_USERS,
    MASTER_FILE,
    MASTER_USER,
    POSTFIX_TABLES,
    RELAY_FILE,
    RELAY_USER,
)
from mcp_wrappers.mail.client import MailClient, MailError, compose
from mcp_wrappers.mail.mailfile import Account, MailFile


class LoadError(Exception):
    pass


def read(folder: Path) -> MailFile:
    """Every file of the folder as one MailFile (accounts and messages in file order)."""
    merged: dict[str, list] = {"domains": [], "accounts": [], "messages": []}
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        where = f"mail/{path.name}"
        try:
            part = MailFile.model_validate(yaml.safe_load(path.read_text()) or {})
        except yaml.YAMLError as exc:
            raise LoadError(f"{where}: not YAML: {str(exc).splitlines()[0]}") from None
        except ValidationError as exc:
            error = exc.errors()[0]
            at = ".".join(map(str, error["loc"])) or "(top)"
            raise LoadError(f"{where}: {at}: {error['msg']}") from None
        merged["domains"] += part.domains
        merged["accounts"] += [a.model_dump() for a in part.accounts]
        merged["messages"] += [m.model_dump(by_alias=True) for m in part.messages]
    try:
        return MailFile.model_validate(merged)
    except ValidationError as exc:
        raise LoadError(f"mail: {exc.errors()[0]['msg']}") from None


def _write(path: Path, text: str, *, owner: str = "root", group: str = "root", mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.chown(tmp, pwd.getpwnam(owner).pw_uid, grp.getgrnam(group).gr_gid)
    os.chmod(tmp, mode)
    tmp.replace(path)


def with_baked(mail: MailFile) -> MailFile:
    """`mail` plus the accounts a world image was baked with (its overlay is gone by now): a task adds
    to its world's mailboxes. Every account gets a fresh password per sandbox all the same."""
    if not ACCOUNTS_FILE.is_file():
        return mail
    baked = json.loads(ACCOUNTS_FILE.read_text())
    mine = {a.address.lower() for a in mail.accounts}
    accounts = [a for a in baked["accounts"] if a["address"].lower() not in mine]
    return mail.model_copy(
        update={
            "domains": sorted({*baked["domains"], *mail.domains}),
            "accounts": [*map(Account.model_validate, accounts), *mail.accounts],
        }
    )


def write_accounts(mail: MailFile) -> None:
    addresses = [a.address.lower() for a in mail.accounts]
    domains = sorted({d.lower() for d in mail.domains} | {a.rpartition("@")[2] for a in addresses})
    _write(POSTFIX_TABLES / "domains", "".join(f"{d} OK\n" for d in domains))
    _write(
        POSTFIX_TABLES / "mailboxes",
        "".join(f"{a} {a.rpartition('@')[2]}/{a.partition('@')[0]}/Maildir/\n" for a in addresses),
    )
    _write(POSTFIX_TABLES / "senders", "".join(f"{a} {a}\n" for a in addresses))
    passwords = {a: secrets.token_urlsafe(18) for a in addresses}
    relay = secrets.token_urlsafe(24)
    _write(RELAY_FILE, relay, owner="vmail", group="vmail", mode=0o600)
    _write(
        DOVECOT_USERS,
        "".join(f"{a}:{{PLAIN}}{p}\n" for a, p in {**passwords, RELAY_USER: relay}.items()),
        group="dovecot",
        mode=0o640,
    )
    master = secrets.token_urlsafe(24)
    _write(DOVECOT_MASTER, f"{MASTER_USER}:{{PLAIN}}{master}\n", group="dovecot", mode=0o640)
    _write(MASTER_FILE, master, group="grader", mode=0o640)
    listing = {"domains": domains, "accounts": [a.model_dump() for a in mail.accounts]}
    _write(ACCOUNTS_FILE, json.dumps(listing, indent=1), group="grader", mode=0o640)
    agent = next((a for a in mail.accounts if a.agent), None)
    if agent is not None:
        address = agent.address.lower()
        env = f"MAIL_ADDRESS={address}\nMAIL_NAME={agent.name}\nMAIL_PASSWORD={passwords[address]}\n"
        _write(AGENT_ENV_FILE, env, owner="agent", group="agent", mode=0o600)


def master_client(address: str) -> MailClient:
    """A session as `address` through the master user (root and the grader may read its password)."""
    return MailClient(address, MASTER_FILE.read_text().strip(), master=True)


def append_messages(mail: MailFile, overlay: Path) -> None:
    names = {a.address.lower(): a.name for a in mail.accounts}
    sessions: dict[str, MailClient] = {}
    try:
        for index, m in enumerate(mail.messages):
            attachments = []
            for a in m.attachments:
                if a.path is not None:
                    source = (overlay / a.path).resolve()
                    if not source.is_file() or overlay.resolve() not in source.parents:
                        raise LoadError(f"messages[{index}].attachments: no file {a.path!r} in the overlay")
                    attachments.append((a.name or source.name, source.read_bytes()))
                else:
                    attachments.append((a.name or "attachment.txt", (a.text or "").encode()))
            name = names.get(m.sender.lower(), "")
            msg = compose(
                sender=f"{name} <{m.sender}>" if name else m.sender,
                to=m.to,
                cc=m.cc,
                subject=m.subject,
                body=m.body,
                date=m.date,
                message_id=m.mid(),
                in_reply_to=m.in_reply_to,
                attachments=attachments,
            )
            flags = ["\\Seen"] * m.seen + ["\\Flagged"] * m.flagged
            account = m.account.lower()
            client = sessions.setdefault(account, master_client(account))
            client.append(m.folder, msg.as_bytes(), flags=flags, when=m.date)
    finally:
        for client in sessions.values():
            client.close()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("accounts", "messages"):
        print("usage: python3 -m mcp_wrappers.mail.load accounts|messages DIR", file=sys.stderr)
        return 2
    step, folder = argv[0], Path(argv[1])
    try:
        mail = read(folder)
        if step == "accounts":
            write_accounts(with_baked(mail))
        else:
            append_messages(mail, folder.parent)
    except (LoadError, MailError, OSError) as exc:
        print(f"load {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
