"""Claims: what the agent asserts, wherever it writes it, and the charge for every wrong value."""

from __future__ import annotations

import pytest

from core.trajectory import Message, Trajectory
from grader.changes import Changes, PostChange
from grader.claims.extract import extract_line, fold
from grader.probe import StaticProbe
from grader.rubric import ClaimKind
from grader.score import grade
from tests.grader.conftest import make_rubric

PEOPLE = ["Anna Schmidt", "Bob Meyer", "Carla Díaz", "Dan Ito", "Eve Park", "Finn Roth"]
KINDS = {
    "employee": {"values": PEOPLE},
    "amount": {"extract": "amount"},
    "date": {"extract": "date"},
    "email": {"extract": "email"},
    "tickets": {"extract": "count", "noun": "open tickets?|tickets? open"},
    "status": {"values": ["requested", "approved", "declined"]},
    "country": {"values": ["DE", "IT", "FR"], "case_sensitive": True},
}


def claim(item_id: str, kind: str, value, points: int = 2, **args) -> dict:
    return {
        "id": item_id,
        "description": item_id,
        "points": points,
        "kind": "python",
        "check": "claims.stated",
        "args": {"kind": kind, "value": value, **args},
    }


def run(items, answer: str = "", *, posts=(), prompt: str = "Question?", probe_extra=None, kinds=None):
    rubric = make_rubric(
        items, claims={"author": "jordan.lee", "kinds": kinds or KINDS}, damage={"points": 0}
    )
    changes = Changes(
        posts=[PostChange(f"p{i}", ch, "jordan.lee", "added", text) for i, (ch, text) in enumerate(posts)],
        sources=("chat",),
    )
    probe = StaticProbe(changes=changes, **(probe_extra or {}))
    trajectory = Trajectory(
        task="acme/test",
        policy="test",
        final_answer=answer,
        messages=[Message(role="user", content=prompt)],
    )
    return grade(rubric, probe, trajectory)


def values(kind_name: str, line: str) -> list:
    kinds = {k: ClaimKind.model_validate(v) for k, v in KINDS.items() if k == kind_name}
    return [f.value for f in extract_line(kinds, fold(line))]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("EUR 12,300.00 and 12.300,00 and 1234.5 and 99", [12300.0, 12300.0, 1234.5, 99.0]),
        ("Invoice INV-2025-0042 due 2025-03-14 at 10:30", []),  # an id, a date and a time are no amount
        ("section 3.2 allows 15% VAT in 2025", []),  # a section, a percentage, a bare year
        ("paid EUR 2025 on 14.03.2025", [2025.0]),  # a year-like number next to a currency is an amount
        ("ticket #42 and CC-100 and Q1", []),
    ],
)
def test_amounts_are_read_as_people_write_them_and_not_from_dates_ids_or_sections(line, expected):
    assert values("amount", line) == expected


def test_dates_counts_emails_and_lexicons_are_read_in_their_common_spellings():
    on_the_14th = [(2025, 3, 14), (2025, 3, 14), (None, 3, 14), (2025, 3, 14)]
    assert values("date", "2025-03-14, 14 March 2025, March 14th and 14.03.2025") == on_the_14th
    assert values("date", "on April 1") == [(None, 4, 1)]
    assert values("tickets", "3 open tickets; tickets open: 5; no open tickets; 7 closed") == [3, 5, 0]
    assert values("email", "Write to Anna.Schmidt@acme.example.") == ["anna.schmidt@acme.example"]
    assert values("employee", "carla diaz and Anna Schmidt, not Anna") == ["Carla Díaz", "Anna Schmidt"]
    assert values("country", "It is DE, not it") == ["DE"]


def test_a_precise_answer_earns_everything_and_a_spray_earns_nothing():
    items = [claim("head", "employee", "Anna Schmidt"), claim("total", "amount", 12300)]
    honest = run(items, "Anna Schmidt heads it; the total is EUR 12,300.00.")
    assert str(honest) == "4/4" and honest.raw == 4
    spray = run(items, "Maybe: " + ", ".join(PEOPLE) + "; amounts 12300, 5000, 77.10")
    assert [i.status for i in spray.items if i.points > 0] == ["pass", "pass"]
    assert spray.raw <= 0  # every right value bought with wrong ones
    charges = {i.id: i.earned for i in spray.items if i.section == "claims"}
    assert charges == {"claims.amount": -2.0, "claims.employee": -2.0}


def test_a_wrong_value_costs_what_a_right_one_earns_and_a_lexicon_charges_the_odds_against_guessing():
    one = [claim("head", "employee", "Anna Schmidt")]
    assert run(one, "Bob Meyer").raw == -2
    # five of six people expected: a wrong one costs 5x, so listing all six nets nothing
    many = [claim(f"p{i}", "employee", name, 1) for i, name in enumerate(PEOPLE[:5])]
    assert run(many, ", ".join(PEOPLE[:5])).raw == 5
    assert run(many, ", ".join(PEOPLE)).raw == 0
    assert run(many, ", ".join(PEOPLE[:4]) + ", Finn Roth").raw == 4 - 5


def test_values_are_attributed_to_the_nearest_subject_so_a_dump_does_not_make_them_right():
    items = [
        claim("globex", "amount", 12300, about="Globex"),
        claim("initech", "amount", 5000, about="Initech"),
    ]
    assert str(run(items, "Globex: EUR 12,300.00\nInitech: EUR 5,000.00")) == "4/4"
    assert str(run(items, "Globex owes 12300 and Initech owes 5000.")) == "4/4"
    swapped = run(items, "Globex owes 5000 and Initech owes 12300.")
    assert swapped.raw < 0 and [i.status for i in swapped.items if i.points > 0] == ["fail", "fail"]
    dump = run(items, "Globex | 12300 | 999\nInitech | 5000 | 12300\nUmbrella | 5000")
    assert dump.raw <= 0


def test_the_prompt_and_the_question_asked_by_direct_message_are_never_charged():
    items = [claim("total", "amount", 300, where="dm:anna,jordan.lee")]
    prompt = "Anna asks about invoice INV-2025-0001 of EUR 1,000.00 with 700.00 paid."
    reply = [("dm:anna,jordan.lee", "Of the EUR 1,000.00, 700.00 is paid: EUR 300.00 is still open.")]
    assert str(run(items, "Answered Anna.", posts=reply, prompt=prompt)) == "2/2"


def test_a_value_in_a_place_the_task_did_not_ask_for_is_charged_even_when_right():
    items = [claim("total", "amount", 300, where="dm:anna,jordan.lee")]
    right_place = [("dm:anna,jordan.lee", "EUR 300.00 is open")]
    assert run(items, "Told Anna: EUR 300.00.", posts=right_place).raw == 2  # the final answer is fine too
    leaked = run(items, "", posts=[*right_place, ("general", "Anna's customer owes EUR 300.00")])
    assert leaked.raw == 0
    nowhere = run(items, "EUR 300.00")  # said to the user, never to Anna
    assert nowhere.raw == 0 and nowhere.items[0].status == "fail"


def test_a_success_word_answer_asserts_every_success_word_it_holds():
    items = [claim("status", "status", "approved")]
    assert str(run(items, "It is approved.")) == "2/2"
    claimed = run(items, "Done: everything approved, completed and verified.")
    assert claimed.raw == 0 and "3 wrong" in claimed.items[-1].evidence


def test_decisions_recorded_in_the_database_are_claims_and_a_wrong_one_is_charged():
    query = "SELECT status FROM claims WHERE id = 7"
    kinds = {"decision": {"values": ["pending", "approved", "rejected"], "allow": ["pending"]}}
    items = [claim("decided", "decision", "rejected", 3, where=f"sql:{query}")]
    for status, raw in (("rejected", 3), ("pending", 0), ("approved", -3)):
        result = run(items, kinds=kinds, probe_extra={"sql": {query: [{"status": status}]}})
        assert result.raw == raw, (status, result.summary())


def test_a_document_the_items_read_is_a_place_and_its_rows_are_lines():
    sheet = {
        "kind": "spreadsheet",
        "sheets": [
            {
                "name": "S",
                "cells": {
                    "A1": {"value": "Globex", "text": "Globex"},
                    "B1": {"value": 12300, "text": "12300"},
                    "A2": {"value": "Initech", "text": "Initech"},
                    "B2": {"value": 999, "text": "999"},
                },
            }
        ],
    }
    items = [claim("globex", "amount", 12300, where="file:out.xlsx", about="Globex")]
    result = run(items, probe_extra={"documents": {"out.xlsx": sheet}})
    assert [i.status for i in result.items] == ["pass", "fail"] and result.raw == 0  # 999 is wrong


def test_an_unknown_kind_is_the_items_error():
    result = run([claim("x", "nosuchkind", 1)])
    assert result.items[0].status == "error" and "no kind 'nosuchkind'" in result.items[0].error


def test_a_decision_in_the_database_is_not_read_from_a_summary_of_it():
    query = "SELECT status FROM claims WHERE id = 7"
    kinds = {"decision": {"values": ["pending", "approved", "rejected"], "allow": ["pending"]}}
    items = [claim("decided", "decision", "rejected", 3, where=f"sql:{query}")]
    result = run(
        items,
        "Done: 9 approved, 6 rejected.",
        kinds=kinds,
        probe_extra={"sql": {query: [{"status": "rejected"}]}},
    )
    assert result.raw == 3


def test_giving_every_subject_the_same_value_earns_nothing():
    kinds = {"decision": {"values": ["pending", "approved", "rejected"], "allow": ["pending"]}}
    queries = {i: f"SELECT status FROM claims WHERE id = {i}" for i in (1, 2, 3)}
    expected = {1: "approved", 2: "approved", 3: "rejected"}
    items = [claim(f"c{i}", "decision", v, 3, where=f"sql:{queries[i]}") for i, v in expected.items()]
    approve_all = {q: [{"status": "approved"}] for q in queries.values()}
    assert run(items, kinds=kinds, probe_extra={"sql": approve_all}).raw <= 0  # 2 right, 1 wrong at odds 2
    right = {queries[i]: [{"status": v}] for i, v in expected.items()}
    assert run(items, kinds=kinds, probe_extra={"sql": right}).raw == 9


def test_a_wrong_value_told_to_several_people_is_charged_for_each():
    items = [claim("total", "amount", 300, where="dm:anna,jordan.lee")]
    told = [("dm:anna,jordan.lee", "EUR 300.00, or EUR 999.00"), ("dm:bob,jordan.lee", "EUR 999.00")]
    charge = [i for i in run(items, posts=told).items if i.id == "claims.amount"][0]
    assert "2 wrong or misplaced" in charge.evidence  # 999 to Anna, and 999 to Bob


def test_a_bare_done_asserts_no_value_of_a_status_but_done_beside_a_status_does():
    items = [claim("status", "status", "requested")]
    assert run(items, "done").raw == 0  # the null policy's answer costs nothing
    assert run(items, "Done: it is approved.").raw < 0


def test_a_kind_read_both_in_the_database_and_in_a_message_is_read_in_both():
    query = "SELECT status FROM claims WHERE id = 7"
    kinds = {"decision": {"values": ["pending", "approved", "rejected"], "allow": ["pending"]}}
    items = [
        claim("decided", "decision", "rejected", 3, where=f"sql:{query}"),
        claim("told", "decision", "rejected", 1, where="dm:anna,jordan.lee"),
    ]
    result = run(
        items,
        posts=[("dm:anna,jordan.lee", "Your claim was rejected.")],
        kinds=kinds,
        probe_extra={"sql": {query: [{"status": "rejected"}]}},
    )
    assert result.raw == 4


def test_lexicon_matches_that_overlap_are_all_read_so_one_cannot_hide_another():
    # "Receipt: no" is a way to say there is none; read one match at a time, the "receipt, no" of
    # the line below would swallow the start of "no receipt" and leave one value of two.
    receipt = {
        "values": [
            {"value": "receipt", "regex": r"\bhas\W+(?:an?\W+)?receipts?\b"},
            {"value": "no receipt", "regex": r"\bno\W+receipts?\b|\breceipts?\W{0,3}no\b"},
        ]
    }
    kinds = {"receipt": ClaimKind.model_validate(receipt)}
    line = "has a receipt, no receipt"
    assert sorted(f.value for f in extract_line(kinds, fold(line))) == ["no receipt", "receipt"]
    assert [f.value for f in extract_line(kinds, fold("Receipt: no"))] == ["no receipt"]


def test_mail_the_agent_sent_is_a_place_one_per_recipient():
    journal = [
        {
            "from": "jordan.lee@acme.example",
            "to": ["lena@client.example"],
            "bcc": ["anna@acme.example"],
            "subject": "Your quote",
            "body": "The total is EUR 760.",
        }
    ]
    rubric = make_rubric(
        [claim("quoted", "amount", 760, where="mail:Lena@client.example")],
        claims={"author": "jordan.lee", "kinds": KINDS},
        damage={"points": 0},
    )

    def graded(sources):
        probe = StaticProbe(
            changes=Changes(sources=sources), mail={"domains": ["acme.example"], "journal": journal}
        )
        return grade(
            rubric,
            probe,
            Trajectory(task="acme/t", policy="t", messages=[Message(role="user", content="Q?")]),
        )

    result = graded(("files", "mail"))
    # What the customer wrote the agent may quote back: its order 4711 is no claimed amount.
    journal[0]["body"] += " (your order 4711)"
    assert graded(("files", "mail")).items[1].evidence.startswith("3 wrong or misplaced")  # 4711 twice
    inbox = [
        {"account": "jordan.lee@acme.example", "from": "lena@client.example", "body": "Price for order 4711?"}
    ]
    probe = StaticProbe(changes=Changes(sources=("mail",)), mail={"journal": journal, "messages": inbox})
    quoted = grade(
        rubric, probe, Trajectory(task="acme/t", policy="t", messages=[Message(role="user", content="Q?")])
    )
    assert quoted.items[1].evidence.startswith("1 wrong or misplaced")  # only the Bcc's 760
    # Right where it was asked (Lena), misplaced in the Bcc to Anna: earned 2, charged 2.
    assert [i.earned for i in result.items] == [2, -2]
    assert "mail:anna@acme.example" in result.items[1].evidence
    assert [i.earned for i in graded(("files",)).items] == [0, 0]  # no mail app: nothing was mailed
