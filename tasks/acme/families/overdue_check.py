"""Late invoices on a given day. Level 0: a due date; level 1: is it overdue, by how many days; level 2: a customer's overdue total in #finance."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    post_step,
    quoted,
    sql_step,
    stated,
)
from families._finance import OVERDUE
from gym.families import Instance

TITLE = "Overdue invoices"
LEVELS = (0, 1, 2)
SPLIT = "train"
OPEN = ("sent", "partially_paid")


def generate(world, rng, level: int) -> Instance:
    invoices = world["invoices"].dicts()
    customers = by_id(world, "customers")
    if level == 0:
        invoice = rng.choice(invoices)
        return Instance(
            prompt=f"When is invoice {invoice['number']} due?",
            rubric_items=[
                stated("due", f"The answer gives {invoice['due_date']}", "date", invoice["due_date"])
            ],
            solution=[
                sql_step(f"SELECT number, due_date FROM invoices WHERE number = {quoted(invoice['number'])}"),
                {"answer": f"Invoice {invoice['number']} is due on {invoice['due_date'].isoformat()}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    open_ones = [i for i in invoices if i["status"] in OPEN]
    if level == 1:
        invoice = rng.choice(open_ones)
        days = rng.choice([-9, -3, 4, 11, 25, 40])  # the day asked about, relative to the due date
        today = invoice["due_date"] + dt.timedelta(days=days)
        late = days > 0
        if late:
            items = [
                stated("verdict", "The answer says it is overdue", "verdict", "overdue", 1),
                stated("days", f"The answer says by {days} days", "days", days, 2),
            ]
        else:
            items = [stated("verdict", "The answer says it is not overdue", "verdict", "not overdue", 3)]
        return Instance(
            prompt=(
                f"Today is {today.isoformat()}. Has invoice {invoice['number']} passed its due date without being "
                "paid? If so, by how many days?"
            ),
            rubric_items=items,
            claims={"verdict": OVERDUE, "days": count_kind("days?")},
            solution=[
                sql_step(
                    f"SELECT number, due_date, status FROM invoices WHERE number = {quoted(invoice['number'])}"
                ),
                {
                    "answer": f"Yes, it is overdue by {days} days; it was due on {invoice['due_date'].isoformat()}."
                    if late
                    else f"No, it is not overdue yet: it is due on {invoice['due_date'].isoformat()}."
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for p in world["payments"].dicts():
        paid[p["invoice_id"]] += p["amount"]
    today = rng.choice([dt.date(2025, 4, 1), dt.date(2025, 4, 15), dt.date(2025, 5, 1), dt.date(2025, 5, 15)])
    overdue: dict[int, list[dict]] = defaultdict(list)
    for i in open_ones:
        if i["due_date"] < today:
            overdue[i["customer_id"]].append(i)
    customer = customers[rng.choice(sorted(overdue))]
    mine = overdue[customer["id"]]
    owed = sum((i["total"] - paid[i["id"]] for i in mine), Decimal(0))
    return Instance(
        prompt=(
            f"Today is {today.isoformat()}. Post in #finance which invoices of {customer['name']} are overdue "
            "(unpaid after their due date) and how much they still owe on them in total, after payments received."
        ),
        rubric_items=[
            *(
                stated(
                    f"invoice-{i['number']}",
                    f"The post names {i['number']}",
                    "invoice",
                    i["number"],
                    1,
                    where="#finance",
                )
                for i in mine
            ),
            stated("owed", f"The post gives {owed} owed in total", "amount", owed, 4, where="#finance"),
        ],
        solution=[
            sql_step(
                "SELECT i.number, i.due_date, i.total - coalesce(sum(p.amount), 0) AS owed FROM invoices i "
                "JOIN customers c ON c.id = i.customer_id LEFT JOIN payments p ON p.invoice_id = i.id "
                f"WHERE c.name = {quoted(customer['name'])} AND i.status IN ('sent', 'partially_paid') "
                f"AND i.due_date < DATE '{today.isoformat()}' GROUP BY i.id ORDER BY i.due_date"
            ),
            post_step(
                "finance",
                f"{customer['name']}: overdue as of {today.isoformat()}: {', '.join(i['number'] for i in mine)}; "
                f"{owed} EUR still owed on them.",
            ),
            {"answer": f"Posted {customer['name']}'s overdue invoices in #finance."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
