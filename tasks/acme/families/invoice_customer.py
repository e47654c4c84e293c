"""Whose invoice is it. Level 0: the customer; level 1: total and due date; level 2: a payment reminder in #finance."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    by_id,
    date_regex,
    money_regex,
    no_spray,
    post_step,
    posted,
    quoted,
    sql_step,
    text_regex,
)
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
    other_names = sorted({text_regex(c["name"]) for c in customers.values() if c["id"] != customer["id"]})
    if level == 0:
        return Instance(
            prompt=f"Which customer is invoice {number} addressed to?",
            rubric_items=[
                answer("customer", f"The answer names {customer['name']}", text_regex(customer["name"])),
                no_spray(other_names, "other customers"),
            ],
            solution=[sql_step(query), {"answer": f"Invoice {number} is addressed to {customer['name']}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    other_totals = sorted({money_regex(i["total"]) for i in invoices if i["total"] != invoice["total"]})
    if level == 1:
        return Instance(
            prompt=f"What is the total of invoice {number}, and when is it due?",
            rubric_items=[
                answer(
                    "total", f"The answer gives the total {invoice['total']}", money_regex(invoice["total"])
                ),
                answer(
                    "due",
                    f"The answer gives the due date {invoice['due_date']}",
                    date_regex(invoice["due_date"]),
                ),
                no_spray(other_totals, "other invoices' totals"),
            ],
            solution=[
                sql_step(query),
                {
                    "answer": f"Invoice {number}: {invoice['total']} EUR, due {invoice['due_date'].isoformat()}."
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    return Instance(
        prompt=(
            f"Post a friendly payment reminder for invoice {number} in #finance so the collections team can "
            "follow up: name the customer, the total in EUR and the due date."
        ),
        rubric_items=[
            posted(
                "reminder",
                f"#finance gets {number} with {customer['name']}, {invoice['total']} and {invoice['due_date']}",
                "finance",
                [
                    text_regex(number),
                    text_regex(customer["name"]),
                    money_regex(invoice["total"]),
                    date_regex(invoice["due_date"]),
                ],
                4,
            )
        ],
        solution=[
            sql_step(query),
            post_step(
                "finance",
                f"Reminder: invoice {number} for {customer['name']}, {invoice['total']} EUR, due on "
                f"{invoice['due_date'].isoformat()}. Could collections follow up?",
            ),
            {"answer": f"Posted the reminder for {number} in #finance."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
