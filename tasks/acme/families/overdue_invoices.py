"""Overdue invoices on a given day. Level 0: is one invoice overdue (yes/no, due date); level 1: a customer's overdue invoices and what is owed on each; level 2: every customer's overdue balance and the grand total."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    answer,
    by_id,
    date_regex,
    money_regex,
    no_spray,
    quoted,
    sql_step,
    text_regex,
)
from families._finance import LIMITS_L2, OPEN, TODAY, eur, paid_by_invoice, slug, together
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
        others = sorted({date_regex(i["due_date"]) for i in invoices if i["due_date"] != due})
        return Instance(
            prompt=(
                f"Today is {day.isoformat()}. Is invoice {invoice['number']} overdue (past its due date and not "
                "fully paid)? Start your answer with yes or no, then give its due date."
            ),
            rubric_items=[
                answer(
                    "verdict",
                    f"The answer starts with {'yes' if late else 'no'}",
                    rf"^\W*{'yes' if late else 'no'}\b",
                ),
                answer("due", f"The answer gives the due date {due}", date_regex(due)),
                no_spray(
                    [rf"^\W*{'no' if late else 'yes'}\b", *others[:150]],
                    "the opposite verdict or other due dates",
                ),
            ],
            solution=[
                sql_step(
                    f"SELECT number, due_date, status FROM invoices WHERE number = {quoted(invoice['number'])}"
                ),
                {
                    "answer": f"{'Yes' if late else 'No'}: invoice {invoice['number']} was due on {due.isoformat()} and is {invoice['status'].replace('_', ' ')}."
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    late = _overdue(invoices, day)
    if level == 1:
        customer = customers[rng.choice(sorted(late))]
        mine = late[customer["id"]]
        wrong = [i for i in invoices if i["customer_id"] == customer["id"] and i not in mine]
        wrong += [i for cid, ls in late.items() if cid != customer["id"] for i in ls]
        return Instance(
            prompt=(
                f"Today is {day.isoformat()}. Which invoices of {customer['name']} are overdue (past their due date "
                "and not fully paid; void and draft invoices don't count), and how much is still owed on each "
                "(its total minus the payments received)?"
            ),
            rubric_items=[
                answer(
                    f"owed-{i['number']}",
                    f"The answer lists {i['number']} with {i['total'] - paid[i['id']]} owed",
                    together(text_regex(i["number"]), money_regex(i["total"] - paid[i["id"]])),
                )
                for i in mine
            ]
            + [
                no_spray(
                    [text_regex(i["number"]) for i in wrong], "invoices that are not overdue or not theirs"
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
            apps=["postgres"],
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
        rubric_items=[
            answer(
                f"owed-{slug(n)}",
                f"The answer gives {n} owing {owed[n]}",
                together(text_regex(n), money_regex(owed[n])),
            )
            for n in ranked
        ]
        + [
            answer("total", f"The answer gives the grand total {total}", money_regex(total), 4),
            no_spray(
                [text_regex(c["name"]) for c in customers.values() if c["name"] not in owed],
                "customers with nothing overdue or outside the list",
                -4,
            ),
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
                + f"\n\nTotal overdue: EUR {eur(total)} across {len(ranked)} customers."
            },
        ],
        apps=["postgres"],
        limits=LIMITS_L2,
    )
