"""Every mailbox and the journal of submitted mail as one JSON document (`python3 -I -m
mcp_wrappers.mail.snapshot`), read over IMAP through the master user: the grader's view of the
mail app (grader/mailstate.py), and the baseline egym-init keeps. Run as root or as `grader`.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from typing import Any

from mcp_wrappers.mail import ACCOUNTS_FILE, JOURNAL
from mcp_wrappers.mail.client import MailError, Parsed, parse
from mcp_wrappers.mail.load import master_client


def _message(parsed: Parsed) -> dict[str, Any]:
    return {
        "message_id": parsed.message_id,
        "from": parsed.sender,
        "to": parsed.to,
        "cc": parsed.cc,
        "subject": parsed.subject,
        "date": parsed.date,
        "in_reply_to": parsed.in_reply_to,
        "body": parsed.body,
        "attachments": [
            {"name": a.name, "content_type": a.content_type, "size": len(a.data), "sha256": a.sha256}
            for a in parsed.attachments
        ],
    }


def mailboxes(addresses: list[str]) -> list[dict[str, Any]]:
    out = []
    for address in addresses:
        client = master_client(address)
        try:
            for folder in client.folders():
                for fetched in client.fetch(folder, client.search(folder, "ALL")):
                    entry = _message(parse(fetched.raw))
                    out.append({"account": address, "folder": folder, "flags": fetched.flags, **entry})
        finally:
            client.close()
    return out


def journal() -> list[dict[str, Any]]:
    out = []
    for path in sorted(JOURNAL.glob("*.json"), key=lambda p: int(p.name.split("-")[0])):
        entry = json.loads(path.read_text())
        message = _message(parse(base64.b64decode(entry["message"])))
        shown = {*message["to"], *message["cc"]}
        message["bcc"] = [r for r in entry["recipients"] if r not in shown]  # the envelope knows them
        message["from"] = (
            entry["login"] or entry["sender"]
        )  # the account that logged in, not a From header it wrote
        out.append(message)
    return out


def settle(timeout_s: float = 15.0) -> None:
    """Wait until Postfix's queue is empty: a message submitted a moment ago is journaled and delivered
    by the queue manager a little later, and the grade must see it. MailError if it does not drain."""
    deadline = time.monotonic() + timeout_s
    while True:
        queued = subprocess.run(["/usr/sbin/postqueue", "-j"], capture_output=True, text=True, check=False)
        if queued.returncode == 0 and not queued.stdout.strip():
            return
        if time.monotonic() > deadline:
            raise MailError(
                f"Postfix's queue did not drain in {timeout_s:g} s: {queued.stdout.strip()[:200]}"
            )
        time.sleep(0.05)


def snapshot() -> dict[str, Any]:
    settle()
    listing = json.loads(ACCOUNTS_FILE.read_text())
    addresses = [a["address"].lower() for a in listing["accounts"]]
    agent = next((a["address"].lower() for a in listing["accounts"] if a.get("agent")), "")
    return {
        "domains": listing["domains"],
        "agent": agent,
        "messages": mailboxes(addresses),
        "journal": journal(),
    }


def main() -> int:
    try:
        data = snapshot()
    except (MailError, OSError, ValueError) as exc:
        print(f"mail snapshot: {exc}", file=sys.stderr)
        return 1
    json.dump(data, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
