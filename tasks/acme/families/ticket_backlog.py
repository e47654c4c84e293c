"""A customer's open tickets. Level 0: how many; level 1: the oldest one; level 2: the list posted in #support."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    by_id,
    count_regex,
    no_spray,
    post_step,
    posted,
    quoted,
    sql_step,
    text_regex,
)
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
        others = sorted({len(ts) for ts in backlog.values()} - {len(mine)})
        return Instance(
            prompt=f"How many open support tickets (status new, open or pending) does {customer['name']} have?",
            rubric_items=[
                answer("count", f"The answer says {len(mine)}", count_regex(len(mine), "tickets?")),
                no_spray([count_regex(k, "tickets?") for k in others], "another count"),
            ],
            solution=[sql_step(query), {"answer": f"{customer['name']} has {len(mine)} open tickets."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    oldest = mine[0]
    if level == 1:
        return Instance(
            prompt=f"Which of {customer['name']}'s open support tickets is the oldest? Give its id and subject.",
            rubric_items=[
                answer("id", f"The answer gives ticket {oldest['id']}", rf"(?<!\d){oldest['id']}(?!\d)"),
                answer(
                    "subject",
                    f"The answer gives the subject {oldest['subject']!r}",
                    text_regex(oldest["subject"]),
                    1,
                ),
                no_spray(
                    [rf"(?<!\d){t['id']}(?!\d)" for t in mine[1:]] or [r"(?!x)x"],
                    "the customer's newer tickets",
                ),
            ],
            solution=[sql_step(query), {"answer": f"Ticket {oldest['id']}: {oldest['subject']}."}],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    return Instance(
        prompt=(
            f"Post {customer['name']}'s open support tickets in #support for the weekly review: one line per ticket "
            "with its id, subject and priority, oldest first."
        ),
        rubric_items=[
            posted(
                f"ticket-{t['id']}",
                f"The post lists ticket {t['id']}",
                "support",
                [rf"(?<!\d){t['id']}(?!\d)", text_regex(t["priority"])],
                1,
            )
            for t in mine
        ]
        + [posted("customer", "The post names the customer", "support", [text_regex(customer["name"])], 1)],
        solution=[
            sql_step(query),
            post_step(
                "support",
                f"{customer['name']}, open tickets:\n"
                + "\n".join(f"- {t['id']}: {t['subject']} ({t['priority']})" for t in mine),
            ),
            {"answer": f"Posted {len(mine)} tickets in #support."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
