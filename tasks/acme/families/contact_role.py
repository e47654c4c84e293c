"""A customer's contacts. Level 0: someone's role; level 1: how many contacts the customer has, and who is primary."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, by_id, count_kind, quoted, sql_step, stated
from gym.families import Instance

TITLE = "Who we know at a customer"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    contacts = world["contacts"].dicts()
    if level == 0:
        contact = rng.choice(contacts)
        customer = customers[contact["customer_id"]]
        return Instance(
            prompt=f"What is {contact['name']}'s role at {customer['name']}?",
            rubric_items=[stated("role", f"The answer says {contact['role']}", "role", contact["role"])],
            claims={"role": {"values": sorted({c["role"] for c in contacts})}},
            solution=[
                sql_step(f"SELECT name, role, email FROM contacts WHERE name = {quoted(contact['name'])}"),
                {"answer": f"{contact['name']} is {contact['role']} at {customer['name']}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    by_customer: dict[int, list[dict]] = {}
    for c in contacts:
        by_customer.setdefault(c["customer_id"], []).append(c)
    customer = customers[
        rng.choice(sorted(i for i, cs in by_customer.items() if any(c["is_primary"] for c in cs)))
    ]
    mine = by_customer[customer["id"]]
    primary = next(c for c in mine if c["is_primary"])
    # Another count, or another contact named (as the primary one or not), is a wrong value.
    return Instance(
        prompt=f"How many contacts do we have at {customer['name']}, and who is the primary one?",
        rubric_items=[
            stated("count", f"The answer says {len(mine)} contacts", "contacts", len(mine)),
            stated("primary", f"The answer names {primary['name']}", "contact", primary["name"], 3),
        ],
        claims={"contacts": count_kind(r"\b(contacts?|people)\b")},
        solution=[
            sql_step(
                "SELECT ct.name, ct.role, ct.is_primary FROM contacts ct JOIN customers c ON c.id = ct.customer_id "
                f"WHERE c.name = {quoted(customer['name'])}"
            ),
            {"answer": f"{len(mine)} contacts; the primary one is {primary['name']}."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
