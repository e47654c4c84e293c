"""A write: close one support ticket, and only that one. Level 0 names the ticket by id."""

from __future__ import annotations

from families._common import LIMITS_L0, execute_step, state
from gym.families import Instance

TITLE = "Resolve a support ticket"
LEVELS = (0,)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    open_tickets = [t for t in world["support_tickets"].dicts() if t["status"] in ("new", "open", "pending")]
    ticket = rng.choice(open_tickets)
    # The status is the prompt's, not a decision: a plain state check; any other row changed is damage.
    return Instance(
        prompt=f'Support ticket {ticket["id"]} ("{ticket["subject"]}") has been fixed. Set its status to resolved.',
        rubric_items=[
            state(
                "resolved",
                f"Ticket {ticket['id']} is resolved",
                f"SELECT status FROM support_tickets WHERE id = {ticket['id']}",
                "resolved",
            )
        ],
        solution=[
            execute_step(f"UPDATE support_tickets SET status = 'resolved' WHERE id = {ticket['id']}"),
            {"answer": f"Ticket {ticket['id']} is now resolved."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["status", "resolved_at"], "at_most": 1}]},
        apps=["db"],
        limits=LIMITS_L0,
    )
