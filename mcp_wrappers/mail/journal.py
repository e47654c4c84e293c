"""Postfix's journal filter: `python3 -I -m mcp_wrappers.mail.journal login=USER SENDER RECIPIENT...` (as vmail).

Every message submitted on port 587 passes here (the submission service's content_filter; see
image/setup) with its envelope: the sender and every recipient, Bcc included. The filter keeps
both in /var/lib/egym-mail/journal/ (one JSON file per message, readable by the grader), then hands
the message back to Postfix on 127.0.0.1:10025 (as the relay account, whose password only vmail
reads), which delivers it without filtering again. So the
grader sees everything that was sent, to anyone, even mail to outside addresses that Postfix then
discards. Exit 75 (EX_TEMPFAIL) makes Postfix retry when something fails here.
"""

from __future__ import annotations

import base64
import json
import os
import smtplib
import sys
import time

from mcp_wrappers.mail import JOURNAL, REINJECT_PORT, RELAY_FILE, RELAY_USER

EX_TEMPFAIL = 75


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[0].startswith("login="):
        print("usage: python3 -m mcp_wrappers.mail.journal login=USER SENDER RECIPIENT...", file=sys.stderr)
        return EX_TEMPFAIL
    login, sender, recipients = argv[0].removeprefix("login="), argv[1], argv[2:]
    raw = sys.stdin.buffer.read()
    entry = {
        "login": login.lower(),  # who sent it, whatever its From header says
        "sender": sender.lower(),
        "recipients": [r.lower() for r in recipients],
        "received_ns": time.time_ns(),
        "message": base64.b64encode(raw).decode(),
    }
    name = JOURNAL / f"{entry['received_ns']}-{os.getpid()}.json"
    tmp = name.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    os.fchmod(fd, 0o640)  # whatever Postfix's umask: the grader (the folder's group) reads it
    with os.fdopen(fd, "w") as out:
        json.dump(entry, out)
    tmp.replace(name)
    try:
        with smtplib.SMTP("127.0.0.1", REINJECT_PORT, timeout=60) as smtp:
            smtp.login(RELAY_USER, RELAY_FILE.read_text().strip())
            smtp.sendmail(sender, recipients, raw)
    except (OSError, smtplib.SMTPException) as exc:
        print(f"journal: could not hand the message back: {exc}", file=sys.stderr)
        return EX_TEMPFAIL
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
