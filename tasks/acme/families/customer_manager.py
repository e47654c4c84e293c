"""Who looks after a customer. Level 0: the account manager; level 1: their e-mail and book size; level 2: a DM to them about open tickets."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    dm,
    dm_step,
    full_name,
    quoted,
    sql_step,
    stated,
)
from gym.families import Instance

TITLE = "A customer's account manager"
LEVELS = (0, 1, 2)
SPLIT = "train"
OPEN = ("new", "open", "pending")
# A ticket id as the prompt asks for it: "#280" (a bare number would be a count's or a date's digits).
TICKET_ID = {"regex": r"(?<![\w&])#\s?(?P<value>\d+)\b"}


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    customers = [c for c in world["customers"].dicts() if c["account_manager_id"]]
    managers = sorted({c["account_manager_id"] for c in customers})
    if level < 2:
        customer = rng.choice(customers)
    else:
        with_open = {t["customer_id"] for t in world["support_tickets"].dicts() if t["status"] in OPEN}
        customer = rng.choice([c for c in customers if c["id"] in with_open])
    manager = people[customer["account_manager_id"]]
    query = (
        "SELECT c.name, e.first_name, e.last_name, e.email, e.chat_username FROM customers c "
        f"JOIN employees e ON e.id = c.account_manager_id WHERE c.name = {quoted(customer['name'])}"
    )
    if level == 0:
        return Instance(
            prompt=f"Who is the account manager for {customer['name']}?",
            rubric_items=[
                stated("manager", f"The answer names {full_name(manager)}", "employee", full_name(manager))
            ],
            solution=[sql_step(query), {"answer": f"{full_name(manager)} manages {customer['name']}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    book = {m: sum(1 for c in customers if c["account_manager_id"] == m) for m in managers}
    n = book[manager["id"]]
    if level == 1:
        return Instance(
            prompt=(
                f"What is the e-mail address of {customer['name']}'s account manager, and how many customers "
                "do they manage in total?"
            ),
            rubric_items=[
                stated("email", f"The answer gives {manager['email']}", "email", manager["email"]),
                stated("book", f"The answer says {n} customers", "book", n, 3),
            ],
            claims={"book": count_kind("customers?|accounts?")},
            solution=[
                sql_step(query),
                sql_step(f"SELECT count(*) FROM customers WHERE account_manager_id = {manager['id']}"),
                {"answer": f"{full_name(manager)}, {manager['email']}, manages {n} customers."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    tickets = [
        t
        for t in world["support_tickets"].dicts()
        if t["customer_id"] == customer["id"] and t["status"] in OPEN
    ]
    channel = dm(manager["chat_username"])
    return Instance(
        prompt=(
            f"Send {customer['name']}'s account manager a direct message saying how many support tickets the "
            "customer has open (status new, open or pending) and listing their ticket ids (as #id)."
        ),
        rubric_items=[
            stated(
                "count",
                f"{full_name(manager)} gets a DM with {len(tickets)} open tickets",
                "open_tickets",
                len(tickets),
                3,
                where=channel,
            ),
            *(
                stated(
                    f"ticket-{t['id']}",
                    f"The DM lists ticket #{t['id']}",
                    "ticket_id",
                    t["id"],
                    1,
                    where=channel,
                )
                for t in tickets
            ),
        ],
        claims={
            "open_tickets": count_kind("tickets?"),
            "ticket_id": TICKET_ID,
        },
        solution=[
            sql_step(query),
            sql_step(
                "SELECT t.id, t.subject, t.status FROM support_tickets t JOIN customers c ON c.id = t.customer_id "
                f"WHERE c.name = {quoted(customer['name'])} AND t.status IN ('new', 'open', 'pending')"
            ),
            dm_step(
                manager["chat_username"],
                f"Hi {manager['first_name']}, {customer['name']} has {len(tickets)} open support tickets: "
                + ", ".join(f"#{t['id']}" for t in tickets)
                + ".",
            ),
            {"answer": f"Sent {full_name(manager)} the open ticket count for {customer['name']}."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
