"""Who looks after a customer. Level 0: the account manager; level 1: their e-mail and book size; level 2: a DM to them about open tickets."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    by_id,
    count_regex,
    dm,
    dm_step,
    full_name,
    no_spray,
    posted,
    quoted,
    sql_step,
    text_regex,
)
from gym.families import Instance

TITLE = "A customer's account manager"
LEVELS = (0, 1, 2)
SPLIT = "train"
OPEN = ("new", "open", "pending")


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
                answer("manager", f"The answer names {full_name(manager)}", text_regex(full_name(manager))),
                no_spray(
                    [text_regex(full_name(people[m])) for m in managers if m != manager["id"]],
                    "other account managers",
                ),
            ],
            solution=[sql_step(query), {"answer": f"{full_name(manager)} manages {customer['name']}."}],
            apps=["postgres"],
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
                answer("email", f"The answer gives {manager['email']}", text_regex(manager["email"])),
                answer("book", f"The answer says {n} customers", count_regex(n, "customers?|accounts?"), 3),
                no_spray(
                    [text_regex(people[m]["email"]) for m in managers if m != manager["id"]]
                    + [count_regex(k, "customers?|accounts?") for k in sorted(set(book.values()) - {n})],
                    "other managers' e-mails or book sizes",
                ),
            ],
            solution=[
                sql_step(query),
                sql_step(f"SELECT count(*) FROM customers WHERE account_manager_id = {manager['id']}"),
                {"answer": f"{full_name(manager)}, {manager['email']}, manages {n} customers."},
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    tickets = [
        t
        for t in world["support_tickets"].dicts()
        if t["customer_id"] == customer["id"] and t["status"] in OPEN
    ]
    return Instance(
        prompt=(
            f"Send {customer['name']}'s account manager a direct message saying how many support tickets the "
            "customer has open (status new, open or pending) and listing their ticket ids."
        ),
        rubric_items=[
            posted(
                "dm",
                f"{full_name(manager)} gets a DM with {len(tickets)} open tickets",
                dm(manager["chat_username"]),
                [count_regex(len(tickets), "tickets?"), text_regex(customer["name"])],
                3,
            ),
            posted(
                "ids",
                "The DM lists every open ticket id",
                dm(manager["chat_username"]),
                [rf"(?<!\d){t['id']}(?!\d)" for t in tickets],
                2,
            ),
        ],
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
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
