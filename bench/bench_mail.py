"""The mail app's cost: a sandbox's start with and without mail (pairs, alternating, so load hits both
alike), loading the example mailboxes, one message sent through the journal until the grader sees it,
and the servers' resident memory.

.venv/bin/python bench/bench_mail.py   -> bench/results/mail.json
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from gym.sandbox import DockerSandbox
from gym.sandbox.overlay import overlay_tar
from mcp_wrappers import PYTHON

PAIRS = 6
EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mail" / "example.yaml"
SEND = """
import datetime as dt
from mcp_wrappers.mail.client import MailClient, compose
env = dict(l.split("=", 1) for l in open("/home/agent/.config/egym/mail.env").read().splitlines())
msg = compose(sender=env["MAIL_ADDRESS"], to=["raj.patel@acme.example"], subject="bench", body="x",
              date=dt.datetime.now(dt.UTC))
MailClient(env["MAIL_ADDRESS"], env["MAIL_PASSWORD"]).send(msg)
"""
# Resident memory of the mail servers' processes, from /proc (kB).
RSS = (
    "for p in $(pgrep -f 'dovecot|postfix|smtpd|qmgr|pickup|postlogd|proxymap|imap|anvil|auth'); do "
    "awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null; done | awk '{s+=$1} END {print s}'"
)


def started(apps: tuple[str, ...]) -> tuple[DockerSandbox, float]:
    overlay = overlay_tar(extra={"mail/001-example.yaml": EXAMPLE.read_bytes()}) if "mail" in apps else None
    t0 = time.perf_counter()
    sandbox = DockerSandbox.start(apps=apps, overlay=overlay, run_id="bench-mail")
    return sandbox, time.perf_counter() - t0


def main() -> None:
    DockerSandbox.start(apps=("db", "mail"), run_id="bench-warmup").close()
    without, with_mail, send, rss_mb = [], [], [], []
    for _ in range(PAIRS):
        sandbox, seconds = started(("db",))
        without.append(seconds)
        sandbox.close()
        sandbox, seconds = started(("db", "mail"))
        with_mail.append(seconds)
        try:
            t0 = time.perf_counter()
            assert sandbox.exec([*PYTHON, "-c", SEND]).ok
            snap = sandbox.exec([*PYTHON, "-m", "mcp_wrappers.mail.snapshot"], user="grader")
            assert snap.ok and '"subject": "bench"' in snap.output, snap.output[-300:]
            send.append(time.perf_counter() - t0)
            rss_mb.append(int(sandbox.exec(RSS).output.strip()) / 1024)  # /proc/PID/status: readable by all
        finally:
            sandbox.close()
    write(
        "mail",
        {
            "what": "sandbox start (until EGYM READY) with db only vs db+mail with the example mailboxes "
            "(tests/fixtures/mail/example.yaml: 3 accounts, 4 messages), in alternating pairs; one message "
            "sent by the agent over SMTP until the grader's snapshot shows it; the mail servers' resident memory",
            "load_average_at_start": os.getloadavg()[0],
            "start_db_s": summary(without),
            "start_db_mail_s": summary(with_mail),
            "mail_adds_s": round(summary(with_mail)["median"] - summary(without)["median"], 3),
            "send_until_graded_s": summary(send),
            "servers_rss_mb": summary(rss_mb),
        },
    )


if __name__ == "__main__":
    main()
