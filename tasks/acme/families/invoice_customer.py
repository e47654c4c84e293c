"""Whose invoice is it. Level 0: the customer; level 1: total and due date; level 2: a payment reminder in #finance."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, LIMITS_L2, by_id, post_step, quoted, sql_step, stated
from gym.families import Instance

TITLE = "Whose invoice it is, and what is due"
LEVELS = (0, 1, 2)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    invoices = world["invoices"].dicts()
    candidates = invoices if level < 2 else [i for i in invoices if i["status"] in ("sent", "partially_paid")]
    invoice = rng.choice(candidates)
    customer = customers[invoice["customer_id"]]
    number = invoice["number"]
    query = (
        "SELECT i.number, c.name AS customer, i.total, i.due_date, i.status FROM invoices i "
        f"JOIN customers c ON c.id = i.customer_id WHERE i.number = {quoted(number)}"
    )
    if level == 0:
        return Instance(
            prompt=f"Which customer is invoice {number} addressed to?",
            rubric_items=[
                stated("customer", f"The answer names {customer['name']}", "customer", customer["name"])
            ],
            solution=[sql_step(query), {"answer": f"Invoice {number} is addressed to {customer['name']}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    total, due = invoice["total"], invoice["due_date"]
    if level == 1:
        return Instance(
            prompt=f"What is the total of invoice {number}, and when is it due?",
            rubric_items=[
                stated("total", f"The answer gives the total {total}", "amount", total),
                stated("due", f"The answer gives the due date {due}", "date", due),
            ],
            solution=[sql_step(query), {"answer": f"Invoice {number}: {total} EUR, due {due.isoformat()}."}],
            apps=["db"],
            limits=LIMITS_L1,
        )
    return Instance(
        prompt=(
            f"Post a friendly payment reminder for invoice {number} in #finance so the collections team can "
            "follow up: name the customer, the total in EUR and the due date."
        ),
        rubric_items=[
            stated(
                "customer",
                f"#finance hears the customer {customer['name']}",
                "customer",
                customer["name"],
                where="#finance",
            ),
            stated("total", f"#finance hears the total {total}", "amount", total, where="#finance"),
            stated("due", f"#finance hears the due date {due}", "date", due, where="#finance"),
        ],
        solution=[
            sql_step(query),
            post_step(
                "finance",
                f"Reminder: invoice {number} for {customer['name']}, {total} EUR, due on "
                f"{due.isoformat()}. Could collections follow up?",
            ),
            {"answer": f"Posted the reminder for {number} in #finance."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
