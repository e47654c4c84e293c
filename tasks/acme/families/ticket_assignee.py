"""Who works a ticket. Level 0: its assignee; level 1: their e-mail and open load; level 2: hand it to someone else and tell them."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    dm,
    dm_step,
    execute_step,
    full_name,
    sql_step,
    state,
    stated,
)
from families._support import subjects
from gym.families import Instance

TITLE = "Who is assigned to a support ticket"
LEVELS = (0, 1, 2)
SPLIT = "train"
OPEN = ("new", "open", "pending")
OPEN_TICKETS = r"\bopen (support )?tickets?\b"  # not just "tickets": the prompt says "ticket 5"


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    tickets = [t for t in world["support_tickets"].dicts() if t["assignee_id"]]
    agents = sorted({t["assignee_id"] for t in tickets})
    pool = tickets if level < 2 else [t for t in tickets if t["status"] in OPEN]
    ticket = rng.choice(pool)
    agent = people[ticket["assignee_id"]]
    query = (
        "SELECT t.id, t.subject, t.status, e.first_name, e.last_name, e.email, e.chat_username FROM support_tickets t "
        f"JOIN employees e ON e.id = t.assignee_id WHERE t.id = {ticket['id']}"
    )
    if level == 0:
        return Instance(
            prompt=f"Who is assigned to support ticket {ticket['id']}?",
            rubric_items=[
                stated("assignee", f"The answer names {full_name(agent)}", "employee", full_name(agent))
            ],
            solution=[
                sql_step(query),
                {"answer": f"Ticket {ticket['id']} is assigned to {full_name(agent)}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    load = {a: sum(1 for t in tickets if t["assignee_id"] == a and t["status"] in OPEN) for a in agents}
    if level == 1:
        n = load[agent["id"]]
        return Instance(
            prompt=(
                f"Who is assigned to support ticket {ticket['id']}? Give their e-mail and how many open tickets "
                "(new, open or pending) they have in total."
            ),
            # Another agent's e-mail or load is a wrong value (grader.claims).
            rubric_items=[
                stated("email", f"The answer gives {agent['email']}", "email", agent["email"]),
                stated("load", f"The answer says {n} open tickets", "open_tickets", n, 3),
            ],
            claims={"open_tickets": count_kind(OPEN_TICKETS)},
            solution=[
                sql_step(query),
                sql_step(
                    f"SELECT count(*) FROM support_tickets WHERE assignee_id = {agent['id']} AND status IN ('new', 'open', 'pending')"
                ),
                {"answer": f"{full_name(agent)} ({agent['email']}) has {n} open tickets."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    lightest = min((a for a in agents if a != agent["id"]), key=lambda a: (load[a], a))
    to = people[lightest]
    return Instance(
        prompt=(
            f"{full_name(agent)} is out this week. Reassign support ticket {ticket['id']} to the support agent with "
            "the fewest open tickets (new, open or pending; among those who have tickets assigned; ties: lowest "
            "employee id), change nothing else, and send that agent a direct message with the ticket id and its "
            "subject."
        ),
        rubric_items=[
            state(
                "assignee",
                f"Ticket {ticket['id']} is assigned to {full_name(to)}",
                f"SELECT assignee_id FROM support_tickets WHERE id = {ticket['id']}",
                to["id"],
                4,
            ),
            # The DM's recipient is the work, and the subject what the prompt does not say.
            stated(
                "told",
                f"{full_name(to)} gets a DM about ticket {ticket['id']} ({ticket['subject']})",
                "subject",
                ticket["subject"],
                2,
                where=dm(to["chat_username"]),
            ),
        ],
        claims={"subject": subjects(world)},
        solution=[
            sql_step(
                "SELECT assignee_id, count(*) FILTER (WHERE status IN ('new', 'open', 'pending')) AS open FROM support_tickets "
                "WHERE assignee_id IS NOT NULL GROUP BY assignee_id ORDER BY open, assignee_id"
            ),
            sql_step(f"SELECT id, first_name, last_name, chat_username FROM employees WHERE id = {to['id']}"),
            sql_step(f"SELECT id, subject FROM support_tickets WHERE id = {ticket['id']}"),
            execute_step(f"UPDATE support_tickets SET assignee_id = {to['id']} WHERE id = {ticket['id']}"),
            dm_step(
                to["chat_username"],
                f"Hi {to['first_name']}, ticket {ticket['id']} ({ticket['subject']}) is yours while {agent['first_name']} is out.",
            ),
            {"answer": f"Ticket {ticket['id']} now goes to {full_name(to)}, who has been told."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["assignee_id"], "at_most": 1}]},
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
