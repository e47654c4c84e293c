"""Who to write to at a customer. Level 0: the primary contact's e-mail; level 1: also their account manager."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A customer's primary contact"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    customers = {c["id"]: c for c in world["customers"].dicts()}
    primaries = {c["customer_id"]: c for c in world["contacts"].dicts() if c["is_primary"]}
    customer = customers[rng.choice(sorted(primaries))]
    contact = primaries[customer["id"]]
    query = (
        "SELECT ct.name, ct.email, ct.role FROM contacts ct JOIN customers c ON c.id = ct.customer_id "
        f"WHERE c.name = {quoted(customer['name'])} AND ct.is_primary"
    )
    email = stated("email", f"The answer gives {contact['email']}", "email", contact["email"])
    if level == 0:
        return Instance(
            prompt=f"What is the e-mail address of the primary contact at {customer['name']}?",
            rubric_items=[email],
            solution=[
                sql_step(query),
                {"answer": f"{contact['name']} <{contact['email']}> is the primary contact."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    employees = {e["id"]: e for e in world["employees"].dicts()}
    manager = employees[customer["account_manager_id"]]
    manager_name = f"{manager['first_name']} {manager['last_name']}"
    return Instance(
        prompt=(
            f"I need to reach {customer['name']}: who is their primary contact (name and e-mail), and who "
            "is our account manager for them?"
        ),
        rubric_items=[
            stated("name", f"The answer names {contact['name']}", "contact", contact["name"], 1),
            email,
            stated(
                "manager", f"The answer names the account manager {manager_name}", "employee", manager_name
            ),
        ],
        solution=[
            sql_step(query),
            sql_step(
                "SELECT e.first_name || ' ' || e.last_name AS account_manager FROM customers c "
                f"JOIN employees e ON e.id = c.account_manager_id WHERE c.name = {quoted(customer['name'])}"
            ),
            {
                "answer": f"Primary contact: {contact['name']} <{contact['email']}>. "
                f"Our account manager: {manager_name}."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
