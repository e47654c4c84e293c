"""A customer's open tickets. Level 0: how many; level 1: the oldest one; level 2: the list posted in #support."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    post_step,
    quoted,
    sql_step,
    stated,
)
from families._support import TICKET, subjects
from gym.families import Instance

TITLE = "A customer's open support tickets"
LEVELS = (0, 1, 2)
SPLIT = "test"  # held out: never trained on
OPEN = ("new", "open", "pending")


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    backlog: dict[int, list[dict]] = {}
    for t in world["support_tickets"].dicts():
        backlog.setdefault(t["customer_id"], [])
        if t["status"] in OPEN:
            backlog[t["customer_id"]].append(t)
    pool = sorted(backlog) if level == 0 else sorted(c for c, ts in backlog.items() if ts)
    customer = customers[rng.choice(pool)]
    mine = sorted(backlog[customer["id"]], key=lambda t: t["created_at"])
    query = (
        "SELECT t.id, t.subject, t.priority, t.status, t.created_at FROM support_tickets t "
        f"JOIN customers c ON c.id = t.customer_id WHERE c.name = {quoted(customer['name'])} "
        "AND t.status IN ('new', 'open', 'pending') ORDER BY t.created_at"
    )
    if level == 0:
        return Instance(
            prompt=f"How many open support tickets (status new, open or pending) does {customer['name']} have?",
            rubric_items=[stated("count", f"The answer says {len(mine)}", "open_tickets", len(mine))],
            claims={"open_tickets": count_kind(r"\btickets?\b")},
            solution=[sql_step(query), {"answer": f"{customer['name']} has {len(mine)} open tickets."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    oldest = mine[0]
    if level == 1:
        # A newer ticket's id or subject is a wrong one (grader.claims).
        return Instance(
            prompt=f"Which of {customer['name']}'s open support tickets is the oldest? Give its id and subject.",
            rubric_items=[
                stated("id", f"The answer gives ticket {oldest['id']}", "ticket", str(oldest["id"])),
                stated(
                    "subject",
                    f"The answer gives the subject {oldest['subject']!r}",
                    "subject",
                    oldest["subject"],
                    1,
                ),
            ],
            claims={"ticket": TICKET, "subject": subjects(world)},
            solution=[sql_step(query), {"answer": f"Ticket {oldest['id']}: {oldest['subject']}."}],
            apps=["db"],
            limits=LIMITS_L1,
        )
    # One line per ticket: its priority counts next to its id; another customer's ticket is a wrong id.
    return Instance(
        prompt=(
            f"Post {customer['name']}'s open support tickets in #support for the weekly review: one line per ticket "
            "with its id, subject and priority, oldest first."
        ),
        rubric_items=[
            claim
            for t in mine
            for claim in (
                stated(
                    f"ticket-{t['id']}",
                    f"The post lists ticket {t['id']}",
                    "ticket",
                    str(t["id"]),
                    1,
                    where="#support",
                ),
                stated(
                    f"priority-{t['id']}",
                    f"Ticket {t['id']} is {t['priority']}",
                    "priority",
                    t["priority"],
                    1,
                    where="#support",
                    about=str(t["id"]),
                ),
            )
        ],
        claims={"ticket": TICKET},
        solution=[
            sql_step(query),
            post_step(
                "support",
                f"{customer['name']}, open tickets:\n"
                + "\n".join(f"- {t['id']}: {t['subject']} ({t['priority']})" for t in mine),
            ),
            {"answer": f"Posted {customer['name']}'s open tickets in #support."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
