"""An invoice's state. Level 0: its status; level 1: what is still owed on it."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, answer, money_regex, no_spray, quoted, sql_step
from gym.families import Instance

TITLE = "The state of an invoice"
LEVELS = (0, 1)
SPLIT = "train"
STATUSES = ("draft", "sent", "paid", "partially_paid", "void")


def generate(world, rng, level: int) -> Instance:
    invoices = world["invoices"].dicts()
    if level == 0:
        invoice = rng.choice(invoices)
        status = invoice["status"]
        label = status.replace("_", r"[ _]")
        others = [s.replace("_", r"[ _]") for s in STATUSES if s != status and s not in status]
        return Instance(
            prompt=f"What is the status of invoice {invoice['number']}? One word is enough.",
            rubric_items=[
                answer("status", f"The answer says {status}", rf"\b{label}\b"),
                no_spray([rf"\b{s}\b" for s in others], "other statuses"),
            ],
            solution=[
                sql_step(f"SELECT number, status FROM invoices WHERE number = {quoted(invoice['number'])}"),
                {"answer": f"Invoice {invoice['number']} is {status.replace('_', ' ')}."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for payment in world["payments"].dicts():
        paid[payment["invoice_id"]] += payment["amount"]
    open_ones = [i for i in invoices if i["status"] in ("sent", "partially_paid")]
    invoice = rng.choice(open_ones)
    owed = invoice["total"] - paid[invoice["id"]]
    others = [
        money_regex(i["total"] - paid[i["id"]]) for i in open_ones if i["total"] - paid[i["id"]] != owed
    ]
    return Instance(
        prompt=(
            f"How much is still owed on invoice {invoice['number']}? Take its total and subtract the "
            "payments recorded against it."
        ),
        rubric_items=[
            answer(
                "total", f"The answer gives the total {invoice['total']}", money_regex(invoice["total"]), 1
            ),
            answer("owed", f"The answer gives {owed} still owed", money_regex(owed), 3),
            no_spray(others[:200], "amounts owed on other invoices"),
        ],
        solution=[
            sql_step(
                "SELECT i.total, coalesce(sum(p.amount), 0) AS paid, i.total - coalesce(sum(p.amount), 0) AS owed "
                f"FROM invoices i LEFT JOIN payments p ON p.invoice_id = i.id WHERE i.number = {quoted(invoice['number'])} "
                "GROUP BY i.id"
            ),
            {"answer": f"Invoice {invoice['number']}: total {invoice['total']} EUR, {owed} EUR still owed."},
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
