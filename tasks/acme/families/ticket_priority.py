"""A ticket's urgency. Level 0: its priority; level 1: its first-response SLA and whether it was met; level 2: escalate it and tell #support."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    execute_step,
    post_step,
    sql_step,
    state,
    stated,
)
from families._support import VERDICT
from gym.families import Instance

TITLE = "A support ticket's priority and SLA"
LEVELS = (0, 1, 2)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    tickets = world["support_tickets"].dicts()
    sla = {p["priority"]: p for p in world["sla_policies"].dicts()}
    query = "SELECT id, subject, priority, status, created_at, first_response_at FROM support_tickets WHERE id = {id}"
    if level == 0:
        ticket = rng.choice(tickets)
        return Instance(
            prompt=f"What priority does support ticket {ticket['id']} have?",
            rubric_items=[
                stated("priority", f"The answer says {ticket['priority']}", "priority", ticket["priority"])
            ],
            solution=[
                sql_step(query.format(id=ticket["id"])),
                {"answer": f"Ticket {ticket['id']} is {ticket['priority']} priority."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        ticket = rng.choice([t for t in tickets if t["first_response_at"]])
        hours = sla[ticket["priority"]]["first_response_hours"]
        taken = (ticket["first_response_at"] - ticket["created_at"]).total_seconds() / 3600
        met = taken <= hours
        # Hours are durations (4 hours, 4 h, 240 minutes): the time the first response took is no wrong
        # one to mention; another limit is.
        return Instance(
            prompt=(
                f"Support ticket {ticket['id']}: how many hours does its priority allow for the first response "
                "(sla_policies), and was the first response fast enough?"
            ),
            rubric_items=[
                stated("hours", f"The answer says {hours} hours", "duration", 60 * hours),
                stated(
                    "met",
                    f"The answer says the SLA was {'met' if met else 'missed'}",
                    "verdict",
                    "met" if met else "missed",
                    3,
                ),
            ],
            claims={
                "duration": {"extract": "duration", "tolerance": 3, "allow": [round(60 * taken, 2)]},
                "verdict": VERDICT,
            },
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
            apps=["db"],
            limits=LIMITS_L1,
        )
    ticket = rng.choice(
        [
            t
            for t in tickets
            if t["status"] in ("new", "open", "pending") and t["priority"] in ("low", "normal")
        ]
    )
    customer = by_id(world, "customers")[ticket["customer_id"]]["name"]
    # The post names the customer, which the prompt does not (the ticket's id and subject it gives).
    return Instance(
        prompt=(
            f"The customer on support ticket {ticket['id']} ({ticket['subject']}) is blocked. Raise the ticket's "
            "priority to high (change nothing else) and tell #support, with the ticket id, its subject and the "
            "customer's name."
        ),
        rubric_items=[
            state(
                "high",
                f"Ticket {ticket['id']} is high priority",
                f"SELECT priority FROM support_tickets WHERE id = {ticket['id']}",
                "high",
            ),
            stated(
                "told",
                f"#support hears that {customer}'s ticket {ticket['id']} is escalated",
                "customer",
                customer,
                3,
                where="#support",
            ),
        ],
        solution=[
            sql_step(
                "SELECT t.id, t.subject, t.priority, c.name AS customer FROM support_tickets t "
                f"JOIN customers c ON c.id = t.customer_id WHERE t.id = {ticket['id']}"
            ),
            execute_step(f"UPDATE support_tickets SET priority = 'high' WHERE id = {ticket['id']}"),
            post_step(
                "support",
                f"Ticket {ticket['id']} ({ticket['subject']}, {customer}) is now high priority: the customer is blocked.",
            ),
            {"answer": f"Ticket {ticket['id']} is now high priority; #support is told."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["priority"], "at_most": 1}]},
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
