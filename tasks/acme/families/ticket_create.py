"""Log a customer's request as a ticket. Level 0: subject and customer given; level 1: linked to the primary contact, priority by segment."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, by_id, full_name, quoted, sql_step, state
from gym.families import Instance

TITLE = "Log a support ticket"
LEVELS = (0, 1)
SPLIT = "train"
SUBJECTS = (
    "Dashboard export times out",
    "Cannot add a new user seat",
    "Invoice address needs updating",
    "Scheduled report arrives empty",
    "Single sign-on login loop",
    "Data connector stopped syncing",
    "Request for a training session",
    "Forecast module shows wrong currency",
)
LOGGED = {"allow": [{"table": "support_tickets", "may": ["add"], "at_most": 1}]}  # the one new ticket


def _row_check(item_id: str, description: str, where: str, points: int = 3) -> dict:
    return state(item_id, description, f"SELECT count(*) FROM support_tickets WHERE {where}", 1, points)


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    primaries = {c["customer_id"]: c for c in world["contacts"].dicts() if c["is_primary"]}
    customer = customers[rng.choice(sorted(primaries))]
    subject = rng.choice(SUBJECTS)
    base = f"customer_id = {customer['id']} AND subject = {quoted(subject)}"
    if level == 0:
        return Instance(
            prompt=(
                f"Log a new support ticket for {customer['name']} (customer id {customer['id']}) with the subject "
                f'"{subject}", status new, priority normal, source phone.'
            ),
            rubric_items=[
                _row_check("logged", f"One ticket {subject!r} for {customer['name']}", base),
                _row_check(
                    "fields",
                    "It is new, normal priority, from the phone",
                    f"{base} AND status = 'new' AND priority = 'normal' AND source = 'phone'",
                    2,
                ),
            ],
            solution=[
                {
                    "tool": "db.execute",
                    "args": {
                        "sql": "INSERT INTO support_tickets (customer_id, subject, description, priority, status, source, created_at) "
                        f"VALUES ({customer['id']}, {quoted(subject)}, '', 'normal', 'new', 'phone', now())"
                    },
                },
                {"answer": f"Logged '{subject}' for {customer['name']}."},
            ],
            damage=LOGGED,
            apps=["db"],
            limits=LIMITS_L0,
        )
    contact = primaries[customer["id"]]
    manager = by_id(world, "employees").get(customer["account_manager_id"])
    priority = "high" if customer["segment"] == "enterprise" else "normal"
    return Instance(
        prompt=(
            f'{customer["name"]}\'s primary contact called about "{subject}". Log it as a new ticket from the phone, '
            "linked to that contact, with priority high for enterprise customers and normal otherwise, "
            "and leave it unassigned."
        ),
        rubric_items=[
            _row_check("logged", f"One ticket {subject!r} for {customer['name']}", base, 2),
            _row_check(
                "contact", f"Linked to {contact['name']}", f"{base} AND contact_id = {contact['id']}", 2
            ),
            _row_check(
                "priority",
                f"Priority {priority} ({customer['segment']})",
                f"{base} AND priority = '{priority}'",
                2,
            ),
            _row_check(
                "rest",
                "New, from the phone, unassigned",
                f"{base} AND status = 'new' AND source = 'phone' AND assignee_id IS NULL",
                1,
            ),
        ],
        solution=[
            sql_step(
                "SELECT c.id, c.segment, ct.id AS contact_id, ct.name FROM customers c JOIN contacts ct ON ct.customer_id = c.id "
                f"AND ct.is_primary WHERE c.name = {quoted(customer['name'])}"
            ),
            {
                "tool": "db.execute",
                "args": {
                    "sql": "INSERT INTO support_tickets (customer_id, contact_id, subject, description, priority, status, source, created_at) "
                    f"VALUES ({customer['id']}, {contact['id']}, {quoted(subject)}, '', '{priority}', 'new', 'phone', now())"
                },
            },
            {
                "answer": f"Logged '{subject}' for {customer['name']} ({priority}), linked to {contact['name']}"
                + (f"; {full_name(manager)} manages the account." if manager else ".")
            },
        ],
        damage=LOGGED,
        apps=["db"],
        limits=LIMITS_L1,
    )
