"""An invoice's state. Level 0: its status; level 1: what is still owed on it."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "The state of an invoice"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    invoices = world["invoices"].dicts()
    if level == 0:
        invoice = rng.choice(invoices)
        status = invoice["status"]
        return Instance(
            prompt=f"What is the status of invoice {invoice['number']}? One word is enough.",
            rubric_items=[stated("status", f"The answer says {status}", "invoice_status", status)],
            solution=[
                sql_step(f"SELECT number, status FROM invoices WHERE number = {quoted(invoice['number'])}"),
                {"answer": f"Invoice {invoice['number']} is {status.replace('_', ' ')}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for payment in world["payments"].dicts():
        paid[payment["invoice_id"]] += payment["amount"]
    invoice = rng.choice([i for i in invoices if i["status"] in ("sent", "partially_paid")])
    owed = invoice["total"] - paid[invoice["id"]]
    return Instance(
        prompt=(
            f"How much is still owed on invoice {invoice['number']}? Take its total and subtract the "
            "payments recorded against it."
        ),
        rubric_items=[
            stated("total", f"The answer gives the total {invoice['total']}", "amount", invoice["total"], 1),
            stated("owed", f"The answer gives {owed} still owed", "amount", owed, 3),
        ],
        # What has been paid is the step between the two: a fact of the invoice, never charged.
        claims={"amount": {"extract": "amount", "allow": [str(paid[invoice["id"]])]}},
        solution=[
            sql_step(
                "SELECT i.total, coalesce(sum(p.amount), 0) AS paid, i.total - coalesce(sum(p.amount), 0) AS owed "
                f"FROM invoices i LEFT JOIN payments p ON p.invoice_id = i.id WHERE i.number = {quoted(invoice['number'])} "
                "GROUP BY i.id"
            ),
            {"answer": f"Invoice {invoice['number']}: total {invoice['total']} EUR, {owed} EUR still owed."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
