"""Overdue invoices on a given day. Level 0: is one invoice overdue (yes/no, due date); level 1: a customer's overdue invoices and what is owed on each; level 2: every customer's overdue balance and the grand total."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, by_id, quoted, sql_step, stated
from families._finance import LIMITS_L2, OPEN, OVERDUE, TODAY, eur, paid_by_invoice, slug
from gym.families import Instance

TITLE = "Overdue invoices and what is owed on them"
LEVELS = (0, 1, 2)
SPLIT = "train"
SEGMENTS = (None, "smb", "mid-market", "enterprise")
OWED_SQL = (
    "SELECT c.name, i.number, i.due_date, i.total - coalesce(sum(p.amount), 0) AS owed FROM invoices i "
    "JOIN customers c ON c.id = i.customer_id LEFT JOIN payments p ON p.invoice_id = i.id "
    "WHERE i.status IN ('sent', 'partially_paid') AND i.due_date < DATE '{day}'{where} "
    "GROUP BY c.name, i.id ORDER BY c.name, i.due_date"
)


def _overdue(invoices, day: dt.date) -> dict[int, list[dict]]:
    late: dict[int, list[dict]] = defaultdict(list)
    for i in invoices:
        if i["status"] in OPEN and i["due_date"] < day:
            late[i["customer_id"]].append(i)
    return late


def generate(world, rng, level: int) -> Instance:
    invoices = sorted(world["invoices"].dicts(), key=lambda i: i["number"])
    customers = by_id(world, "customers")
    paid = paid_by_invoice(world)
    # Today is the world's today or later: no payment is recorded after it, so the statuses hold.
    day = TODAY + dt.timedelta(days=rng.randrange(40 if level < 2 else 30))
    if level == 0:
        pool = [i for i in invoices if i["status"] in (OPEN if rng.random() < 0.65 else ("paid",))]
        invoice = rng.choice(pool)
        if day == invoice["due_date"]:
            day += dt.timedelta(days=1)
        late = invoice["status"] in OPEN and invoice["due_date"] < day
        due = invoice["due_date"]
        verdict = "overdue" if late else "not overdue"
        return Instance(
            prompt=(
                f"Today is {day.isoformat()}. Has invoice {invoice['number']} passed its due date without being "
                "fully paid? Give your verdict and its due date."
            ),
            rubric_items=[
                stated("verdict", f"The answer says it is {verdict}", "verdict", verdict),
                stated("due", f"The answer gives the due date {due}", "date", due),
            ],
            claims={"verdict": OVERDUE},
            solution=[
                sql_step(
                    f"SELECT number, due_date, status FROM invoices WHERE number = {quoted(invoice['number'])}"
                ),
                {
                    "answer": f"{'Yes' if late else 'No'}: invoice {invoice['number']} is {verdict}; it was due on {due.isoformat()}."
                },
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    late = _overdue(invoices, day)
    if level == 1:
        customer = customers[rng.choice(sorted(late))]
        mine = late[customer["id"]]
        return Instance(
            prompt=(
                f"Today is {day.isoformat()}. Which invoices of {customer['name']} are overdue (past their due date "
                "and not fully paid; void and draft invoices don't count), and how much is still owed on each "
                "(its total minus the payments received)?"
            ),
            # Each amount counts next to its invoice's number only.
            rubric_items=[
                item
                for i in mine
                for item in (
                    stated(
                        f"invoice-{i['number']}", f"The answer lists {i['number']}", "invoice", i["number"], 1
                    ),
                    stated(
                        f"owed-{i['number']}",
                        f"... with {i['total'] - paid[i['id']]} owed",
                        "amount",
                        i["total"] - paid[i["id"]],
                        about=i["number"],
                    ),
                )
            ],
            solution=[
                sql_step(
                    OWED_SQL.format(day=day.isoformat(), where=f" AND c.name = {quoted(customer['name'])}")
                ),
                {
                    "answer": f"{customer['name']}'s overdue invoices on {day.isoformat()}: "
                    + "; ".join(f"{i['number']}: {eur(i['total'] - paid[i['id']])} EUR owed" for i in mine)
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    segment = rng.choice(
        [s for s in SEGMENTS if sum(1 for c in late if s in (None, customers[c]["segment"])) >= 2]
    )
    owed = {
        customers[c]["name"]: sum((i["total"] - paid[i["id"]] for i in ls), Decimal(0))
        for c, ls in late.items()
        if segment in (None, customers[c]["segment"])
    }
    ranked = sorted(owed, key=lambda n: (-owed[n], n))
    total = sum(owed.values(), Decimal(0))
    who = f"customers in the {segment} segment" if segment else "customers"
    return Instance(
        prompt=(
            f"Miriam (Head of Finance) has a call with our collections agency in ten minutes and needs a quick list: "
            f"which {who} currently have overdue invoices, and how much does each of them still owe on those "
            f"invoices? Overdue means past the due date (today is {day.isoformat()}) and not fully paid; void and "
            "draft invoices don't count. The amount owed is the invoice total minus the payments received so far. "
            "Give the grand total as well. Just answer here, don't change anything."
        ),
        # Each amount counts next to its customer's name only; the grand total stands on its own.
        rubric_items=[
            *(
                stated(f"owed-{slug(n)}", f"The answer gives {n} owing {owed[n]}", "amount", owed[n], about=n)
                for n in ranked
            ),
            stated("total", f"The answer gives the grand total {total}", "amount", total, 4),
        ],
        solution=[
            sql_step(
                "SELECT name, count(*) AS invoices, sum(owed) AS outstanding FROM ("
                + OWED_SQL.format(
                    day=day.isoformat(), where=f" AND c.segment = {quoted(segment)}" if segment else ""
                ).replace(" ORDER BY c.name, i.due_date", "")
                + ") x GROUP BY name ORDER BY outstanding DESC"
            ),
            {
                "answer": f"Overdue on {day.isoformat()} (amount still owed):\n"
                + "\n".join(f"- {n}: EUR {eur(owed[n])}" for n in ranked)
                + f"\n\nTotal overdue: EUR {eur(total)}"
            },
        ],
        apps=["db"],
        limits=LIMITS_L2,
    )
