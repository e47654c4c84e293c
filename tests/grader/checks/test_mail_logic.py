"""Mail checks' logic on a fixed snapshot (the real servers' snapshot is tested in tests/mcp_wrappers)."""

from __future__ import annotations

import hashlib

from grader.checks import mail
from grader.checks.base import CheckContext
from grader.probe import StaticProbe

ITEM = {"id": "sent", "description": "d", "kind": "python", "points": 1, "check": "mail.sent", "args": {}}
QUOTE = b"PK\x03\x04 a spreadsheet"
SNAPSHOT = {
    "domains": ["acme.example"],
    "messages": [
        {
            "account": "dana@acme.example",
            "folder": "Archive",
            "from": "raj@acme.example",
            "subject": "Q1 accruals",
        },
        {
            "account": "dana@acme.example",
            "folder": "INBOX",
            "from": "lena@client.example",
            "subject": "Quote?",
        },
    ],
    "journal": [
        {
            "from": "dana@acme.example",
            "to": ["lena@client.example"],
            "cc": ["raj@acme.example"],
            "subject": "Re: Quote?",
            "body": "Please find the quote attached: EUR 4,200.",
            "attachments": [
                {"name": "quote.xlsx", "size": len(QUOTE), "sha256": hashlib.sha256(QUOTE).hexdigest()}
            ],
        }
    ],
}


def ctx(**files) -> CheckContext:
    return CheckContext(StaticProbe(mail=SNAPSHOT, files={k: v for k, v in files.items()}))


def test_sent_matches_recipients_by_address_or_name_subject_body_and_attachment():
    c = ctx()
    assert mail.sent(
        c, to="lena@client.example", subject=r"^re: quote", text="EUR 4,200", attachment=r".*\.xlsx"
    )
    assert mail.sent(c, to=["lena@client.example", "raj"])  # raj is in cc
    assert not mail.sent(c, to=["lena@client.example", "ola"])
    assert not mail.sent(c, sender="raj")
    assert not mail.sent(c, attachment=r"quote\.pdf")
    assert "0 matching message(s) of 1 sent" in mail.sent(c, to="ola").evidence


def test_an_attachment_is_compared_with_the_workspace_file_byte_for_byte():
    assert mail.sent(ctx(**{"quote.xlsx": QUOTE}), attachment_of="quote.xlsx")
    assert not mail.sent(ctx(**{"quote.xlsx": QUOTE + b"changed"}), attachment_of="quote.xlsx")
    assert not mail.sent(ctx(), attachment_of="quote.xlsx")  # no such file


def test_not_sent_and_nothing_sent_outside_see_the_journal():
    c = ctx()
    assert mail.not_sent(c, to="ola")
    assert not mail.not_sent(c, regex=r"EUR\s*4,200")
    outside = mail.nothing_sent_outside(c)
    assert not outside and "lena@client.example" in outside.evidence
    assert mail.nothing_sent_outside(c, allow=["lena@client.example"])


def test_a_coworkers_reply_in_the_journal_is_not_the_agents_mail():
    reply = {
        "from": "raj@acme.example",
        "to": ["dana@acme.example"],
        "subject": "Re: Q1",
        "body": "Friday 25 April.",
    }
    snapshot = {**SNAPSHOT, "agent": "dana@acme.example", "journal": [*SNAPSHOT["journal"], reply]}
    c = CheckContext(StaticProbe(mail=snapshot))
    assert not mail.sent(c, text="Friday") and mail.not_sent(c, regex="25 April")
    assert "of 1 sent" in mail.sent(c, to="ola").evidence
    assert mail.sent(c, text="EUR 4,200")  # the agent's own message still counts


def test_filed_finds_the_message_in_its_folder_and_says_where_it_is_otherwise():
    c = ctx()
    assert mail.filed(c, account="dana", folder="archive", subject="accruals")
    result = mail.filed(c, account="dana", folder="Archive", subject="Quote")
    assert not result and "matching ones are in INBOX" in result.evidence


def test_filed_counts_only_a_message_moved_there_not_one_written_into_the_folder():
    from grader.changes import Changes, MailChange

    appended = {
        "account": "dana@acme.example",
        "folder": "Archive",
        "message_id": "<fake@x>",
        "subject": "Quote?",
    }
    snapshot = {**SNAPSHOT, "messages": [*SNAPSHOT["messages"], appended]}
    real = MailChange("dana@acme.example", "INBOX", "Quote?", "moved", "Archive", "<quote@client>")

    def filed(changes):
        probe = StaticProbe(mail=snapshot, changes=Changes(mail=changes, sources=("mail",)))
        return mail.filed(CheckContext(probe), account="dana", folder="Archive", subject="Quote")

    assert not filed([])  # only the copy the agent APPENDed is there
    snapshot["messages"][1] = {**snapshot["messages"][1], "folder": "Archive", "message_id": "<quote@client>"}
    assert filed([real])


def test_mail_moved_or_deleted_from_the_initial_mailboxes_is_damage_unless_allowed():
    from grader.changes import Changes, mail_changes
    from grader.damage import damage_items
    from grader.mailstate import MailSnapshot
    from grader.rubric import Rubric

    baseline = MailSnapshot.model_validate(SNAPSHOT)
    final = MailSnapshot.model_validate(
        {**SNAPSHOT, "messages": [{**SNAPSHOT["messages"][1], "folder": "Archive"}]}  # one filed, one deleted
    )
    changes = mail_changes(baseline, final)
    assert [(c.subject, c.change, c.to_folder) for c in changes] == [
        ("Q1 accruals", "deleted", ""),
        ("Quote?", "moved", "Archive"),
    ]
    assert mail_changes(baseline, baseline) == []

    def charged(allow):
        rubric = Rubric.model_validate(
            {"task": "w/t", "items": [ITEM], "damage": {"points": 1, "allow": allow}}
        )
        [item] = damage_items(rubric, Changes(mail=changes, sources=("mail",)), possible=10)
        return item.earned

    assert charged([]) == -2
    assert charged([{"mail": "dana@*", "may": ["change"]}]) == -1  # filing is allowed, deleting is not
    assert charged([{"mail": "*", "may": ["change", "delete"]}]) == 0
