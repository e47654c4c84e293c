"""A ticket's urgency. Level 0: its priority; level 1: its first-response SLA and whether it was met; level 2: escalate it and tell #support."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    count_regex,
    execute_step,
    no_spray,
    post_step,
    posted,
    sql_step,
    state,
    text_regex,
)
from gym.families import Instance

TITLE = "A support ticket's priority and SLA"
LEVELS = (0, 1, 2)
SPLIT = "train"
PRIORITIES = ("low", "normal", "high", "urgent")
# The verdict in words the prompt does not use (a policy restating the prompt must not pass).
MET = r"(?i:\b(was met|is met|were met|met the|met its|within|in time|on time)\b)"
MISSED = r"(?i:\b(missed|breach\w*|not met|late|exceeded|too slow)\b)"


def generate(world, rng, level: int) -> Instance:
    tickets = world["support_tickets"].dicts()
    sla = {p["priority"]: p for p in world["sla_policies"].dicts()}
    query = "SELECT id, subject, priority, status, created_at, first_response_at FROM support_tickets WHERE id = {id}"
    if level == 0:
        ticket = rng.choice(tickets)
        return Instance(
            prompt=f"What priority does support ticket {ticket['id']} have?",
            rubric_items=[
                answer("priority", f"The answer says {ticket['priority']}", text_regex(ticket["priority"])),
                no_spray([text_regex(p) for p in PRIORITIES if p != ticket["priority"]], "other priorities"),
            ],
            solution=[
                sql_step(query.format(id=ticket["id"])),
                {"answer": f"Ticket {ticket['id']} is {ticket['priority']} priority."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    if level == 1:
        ticket = rng.choice([t for t in tickets if t["first_response_at"]])
        hours = sla[ticket["priority"]]["first_response_hours"]
        taken = (ticket["first_response_at"] - ticket["created_at"]).total_seconds() / 3600
        met = taken <= hours
        return Instance(
            prompt=(
                f"Support ticket {ticket['id']}: how many hours does its priority allow for the first response "
                "(sla_policies), and was the first response fast enough?"
            ),
            rubric_items=[
                answer("hours", f"The answer says {hours} hours", count_regex(hours, "hours?|h\\b")),
                answer(
                    "met",
                    f"The answer says the SLA was {'met' if met else 'missed'}",
                    r"(?i:\b(met|within|yes)\b)"
                    if met
                    else r"(?i:\b(missed|breach\w*|not met|late|exceeded)\b)",
                    3,
                ),
                no_spray(
                    [
                        r"(?i:\b(missed|breach\w*|not met|exceeded)\b)"
                        if met
                        else r"(?i:\bwas met\b|\bwithin\b)"
                    ],
                    "the opposite verdict",
                ),
            ],
            solution=[
                sql_step(query.format(id=ticket["id"])),
                sql_step(
                    f"SELECT first_response_hours FROM sla_policies WHERE priority = '{ticket['priority']}'"
                ),
                {
                    "answer": f"{ticket['priority']} allows {hours} hours; the first response took {taken:.1f} hours, so the SLA was "
                    + ("met." if met else "missed.")
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    ticket = rng.choice(
        [
            t
            for t in tickets
            if t["status"] in ("new", "open", "pending") and t["priority"] in ("low", "normal")
        ]
    )
    return Instance(
        prompt=(
            f"The customer on support ticket {ticket['id']} ({ticket['subject']}) is blocked. Raise the ticket's "
            "priority to high (change nothing else) and tell #support, with the ticket id and its subject."
        ),
        rubric_items=[
            state(
                "high",
                f"Ticket {ticket['id']} is high priority",
                f"SELECT priority FROM support_tickets WHERE id = {ticket['id']}",
                "high",
            ),
            posted(
                "told",
                f"#support hears about ticket {ticket['id']}",
                "support",
                [rf"(?<!\d){ticket['id']}(?!\d)", text_regex(ticket["subject"]), r"(?i:\bhigh\b)"],
            ),
        ],
        solution=[
            sql_step(query.format(id=ticket["id"])),
            execute_step(f"UPDATE support_tickets SET priority = 'high' WHERE id = {ticket['id']}"),
            post_step(
                "support",
                f"Ticket {ticket['id']} ({ticket['subject']}) is now high priority: the customer is blocked.",
            ),
            {"answer": f"Ticket {ticket['id']} is now high priority; #support is told."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["priority"], "at_most": 1}]},
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
