"""Coworkers by mail against the real servers: `python3 -I -m mcp_wrappers.mail.coworkers`, run as the
grader, reads what reached the coworkers' mailboxes and sends their replies as them.

The sandbox is test_mail_servers's (its fixture and helpers, tests/fixtures/mail/example.yaml): Dana
Lee is the agent, Raj Patel and Ola Berg the coworkers. The tests run in order, later ones answer
what earlier ones sent.
"""

from __future__ import annotations

import json
import time

import pytest

from mcp_wrappers import PYTHON
from tests.mcp_wrappers import test_mail_servers
from tests.mcp_wrappers.test_mail_servers import AGENT, as_agent, snapshot

pytestmark = pytest.mark.docker
mail_sandbox = test_mail_servers.mail_sandbox  # its fixture, which gives this module a sandbox of its own
RAJ, OLA = "raj.patel@acme.example", "ola.berg@acme.example"
COWORKERS = [*PYTHON, "-m", "mcp_wrappers.mail.coworkers"]
SEND = """
from email.message import EmailMessage
msg = EmailMessage()
msg["From"], msg["To"], msg["Subject"] = ME, {to!r}, {subject!r}
msg["Message-ID"] = {mid!r}
if {parent!r}:
    msg["In-Reply-To"], msg["References"] = {parent!r}, {parent!r}
msg.set_content({body!r})
smtp = smtplib.SMTP("127.0.0.1", 587); smtp.login(ME, PASSWORD); smtp.send_message(msg); smtp.quit()
"""
heard: dict[str, dict] = {}  # what the first test read, for the ones after it


def coworkers(sandbox, *args: str, user: str = "grader"):
    return sandbox.exec([*COWORKERS, *args], user=user, timeout=60)


def read(sandbox, people: list[str], since: int) -> list[dict]:
    result = coworkers(sandbox, "inbox", "--people", ",".join(people), "--since", str(since))
    assert result.exit_code == 0, result.output[-800:]
    return json.loads(result.output)


def agent_sends(sandbox, *, to: str, subject: str, mid: str, parent: str = "", body: str = "") -> None:
    as_agent(sandbox, SEND.format(to=to, subject=subject, mid=mid, parent=parent, body=body or subject))


def test_what_the_agent_sent_a_coworker_is_read_after_since_with_its_people_thread_and_subject(
    mail_sandbox,
):
    agent_sends(mail_sandbox, to=RAJ, subject="Old question", mid="<old@acme.example>")
    # The loaded mailboxes (Raj's INBOX holds a message from Dana dated 2025) never count.
    assert [m["id"] for m in read(mail_sandbox, [RAJ, OLA], 0)] == ["<old@acme.example>"]
    time.sleep(1.05)  # arrival times are whole seconds: `since` is in a later one than the old message's
    since = int(time.time() * 1000)
    agent_sends(
        mail_sandbox,
        to=f"{RAJ}, {OLA}",
        subject="Re: Price list 2025",
        mid="<ask-1@acme.example>",
        parent="<prices@acme.example>",
        body="When is the Oceanic renewal call now?",
    )
    [said] = read(mail_sandbox, [RAJ, OLA], since)
    assert said == {
        "id": "<ask-1@acme.example>",
        "channel_id": OLA,
        "channel": f"mail:{OLA}",
        "root_id": "<prices@acme.example>",
        "user": AGENT,
        "message": "Subject: Re: Price list 2025\n\nWhen is the Oceanic renewal call now?",
        "create_at": said["create_at"],
        "to": [OLA, RAJ],
        "subject": "Re: Price list 2025",
    }
    assert since - 1000 < said["create_at"] <= int(time.time() * 1000)
    assert read(mail_sandbox, [RAJ], since)[0]["to"] == [RAJ]  # only the people asked about
    heard.update(said)


def test_a_reply_is_sent_as_the_coworker_threaded_into_the_agents_mailbox_and_not_read_back(mail_sandbox):
    assert heard, "needs the message the first test read"
    time.sleep(1.05)  # past the second the agent's message arrived in (which `inbox` would give again)
    since = int(time.time() * 1000)
    result = coworkers(
        mail_sandbox,
        "post",
        "--as",
        RAJ,
        "--to",
        heard["user"],
        "--subject",
        "Re: Price list 2025",
        "--in-reply-to",
        heard["id"],
        "--references",
        f"{heard['root_id']} {heard['id']}",
        "--message",
        "We moved it to Friday 25 April.",
    )
    assert result.exit_code == 0, result.output[-800:]
    posted = json.loads(result.output)
    mid = posted["id"]
    assert mid.endswith("@acme.example>") and posted["create_at"] >= since
    # The agent's own IMAP login sees it at once (post waits until it is delivered), in the thread.
    printed = as_agent(
        mail_sandbox,
        f"""
        import email
        imap = imaplib.IMAP4("127.0.0.1", 143); imap.login(ME, PASSWORD); imap.select("INBOX", readonly=True)
        _, found = imap.uid("SEARCH", "HEADER", "Message-ID", {mid!r})
        _, data = imap.uid("FETCH", found[0].split()[-1], "(BODY.PEEK[])")
        msg = email.message_from_bytes(data[0][1])
        print(msg["From"], "|", msg["In-Reply-To"], "|", msg["References"], "|", msg.get_payload().strip())
        """,
    )
    assert printed.strip() == (
        f"Raj Patel <{RAJ}> | <ask-1@acme.example> | <prices@acme.example> <ask-1@acme.example> | "
        "We moved it to Friday 25 April."
    )
    state = snapshot(mail_sandbox)
    [kept] = [m for m in state["messages"] if m["message_id"] == mid and m["account"] == RAJ]
    assert kept["folder"] == "Sent"
    [journaled] = [m for m in state["journal"] if m["message_id"] == mid]
    assert journaled["from"] == RAJ  # submitted as Raj, not as the agent nor the master user
    # A coworker's own mail is not something said to the coworkers, even to another one of them.
    result = coworkers(mail_sandbox, "post", "--as", RAJ, "--to", OLA, "--subject", "FYI", "--message", "x")
    assert result.exit_code == 0, result.output[-800:]
    assert read(mail_sandbox, [RAJ, OLA], since) == []
    assert [m["user"] for m in read(mail_sandbox, [OLA], since)] == [RAJ]


def test_an_unknown_address_or_no_master_password_is_one_line_and_exit_1(mail_sandbox):
    nobody = "nobody@acme.example"
    for args in (
        ("inbox", "--people", f"{RAJ},{nobody}", "--since", "0"),
        ("post", "--as", RAJ, "--to", nobody, "--subject", "x", "--message", "x"),
        ("post", "--as", nobody, "--to", AGENT, "--subject", "x", "--message", "x"),
    ):
        result = coworkers(mail_sandbox, *args)
        assert result.exit_code == 1 and result.output.strip() == f"coworkers: no mail account {nobody}"
    # The agent can run it, but reads nothing through it.
    result = coworkers(mail_sandbox, "inbox", "--people", RAJ, "--since", "0", user="agent")
    assert result.exit_code == 1 and result.output.startswith("coworkers: no mail accounts (")
    secret = "/egym/secrets/mail-master"
    assert mail_sandbox.exec(f"mv {secret} {secret}.away", user="root").exit_code == 0
    try:
        result = coworkers(mail_sandbox, "inbox", "--people", RAJ, "--since", "0")
    finally:
        assert mail_sandbox.exec(f"mv {secret}.away {secret}", user="root").exit_code == 0
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("coworkers: no mail master password (")
