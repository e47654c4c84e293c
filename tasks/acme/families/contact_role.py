"""A customer's contacts. Level 0: someone's role; level 1: how many contacts the customer has, and who is primary."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    answer,
    by_id,
    count_regex,
    no_spray,
    quoted,
    sql_step,
    text_regex,
)
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
        roles = sorted({c["role"] for c in contacts} - {contact["role"]})
        return Instance(
            prompt=f"What is {contact['name']}'s role at {customer['name']}?",
            rubric_items=[
                answer("role", f"The answer says {contact['role']}", text_regex(contact["role"])),
                no_spray([text_regex(r) for r in roles], "other roles"),
            ],
            solution=[
                sql_step(f"SELECT name, role, email FROM contacts WHERE name = {quoted(contact['name'])}"),
                {"answer": f"{contact['name']} is {contact['role']} at {customer['name']}."},
            ],
            apps=["postgres"],
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
    counts = sorted({len(cs) for cs in by_customer.values()} - {len(mine)})
    return Instance(
        prompt=f"How many contacts do we have at {customer['name']}, and who is the primary one?",
        rubric_items=[
            answer(
                "count", f"The answer says {len(mine)} contacts", count_regex(len(mine), "contacts?|people")
            ),
            answer("primary", f"The answer names {primary['name']}", text_regex(primary["name"]), 3),
            no_spray(
                [count_regex(k, "contacts?|people") for k in counts]
                + [rf"{text_regex(c['name'])}[^\n]{{0,20}}(?i:primary)" for c in mine if not c["is_primary"]],
                "another count or another primary",
            ),
        ],
        solution=[
            sql_step(
                "SELECT ct.name, ct.role, ct.is_primary FROM contacts ct JOIN customers c ON c.id = ct.customer_id "
                f"WHERE c.name = {quoted(customer['name'])}"
            ),
            {"answer": f"{len(mine)} contacts; the primary one is {primary['name']}."},
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
