"""A write: close one support ticket, and only that one. Level 0 names the ticket by id."""

from __future__ import annotations

from families._common import LIMITS_L0
from gym.families import Instance

TITLE = "Resolve a support ticket"
LEVELS = (0,)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    open_tickets = [t for t in world["support_tickets"].dicts() if t["status"] in ("new", "open", "pending")]
    ticket = rng.choice(open_tickets)
    return Instance(
        prompt=f'Support ticket {ticket["id"]} ("{ticket["subject"]}") has been fixed. Set its status to resolved.',
        rubric_items=[
            {
                "id": "resolved",
                "description": f"Ticket {ticket['id']} is resolved",
                "points": 3,
                "kind": "python",
                "section": "database",
                "check": "sql.value_equals",
                "args": {
                    "query": f"SELECT status FROM support_tickets WHERE id = {ticket['id']}",
                    "expected": "resolved",
                },
            }
        ],
        solution=[
            {
                "tool": "db.execute",
                "args": {"sql": f"UPDATE support_tickets SET status = 'resolved' WHERE id = {ticket['id']}"},
            },
            {"answer": f"Ticket {ticket['id']} is now resolved."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["status", "resolved_at"], "at_most": 1}]},
        apps=["postgres"],
        limits=LIMITS_L0,
    )
