"""A payment received. Level 0: how it was paid; level 1: when and how much; level 2: a day's receipts posted to #finance."""

from __future__ import annotations

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
from gym.families import Instance

TITLE = "A payment we received"
LEVELS = (0, 1, 2)
SPLIT = "train"
METHOD = {
    "values": [
        {"value": "bank_transfer", "regex": r"\b(?:bank|wire)[ _-]?transfer\b"},
        {"value": "card", "regex": r"\b(?:credit |debit )?card\b"},
        {"value": "direct_debit", "regex": r"\bdirect[ _-]?debit\b"},
    ]
}


def generate(world, rng, level: int) -> Instance:
    payments = world["payments"].dicts()
    invoices = by_id(world, "invoices")
    if level == 0:
        payment = rng.choice(payments)
        method = payment["method"]
        return Instance(
            prompt=f"Which payment method was used for the payment with reference {payment['reference']}?",
            rubric_items=[stated("method", f"The answer says {method}", "method", method)],
            claims={"method": METHOD},
            solution=[
                sql_step(
                    f"SELECT reference, method FROM payments WHERE reference = {quoted(payment['reference'])}"
                ),
                {"answer": f"Payment {payment['reference']} was made by {method.replace('_', ' ')}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        by_invoice: dict[int, list[dict]] = defaultdict(list)
        for p in payments:
            by_invoice[p["invoice_id"]].append(p)
        single = sorted(i for i, ps in by_invoice.items() if len(ps) == 1)  # one payment: one date
        invoice = invoices[rng.choice(single)]
        payment = by_invoice[invoice["id"]][0]
        return Instance(
            prompt=f"When did we receive the payment for invoice {invoice['number']}, and how much was it?",
            rubric_items=[
                stated("date", f"The answer gives {payment['paid_on']}", "date", payment["paid_on"]),
                stated("amount", f"The answer gives {payment['amount']}", "amount", payment["amount"], 3),
            ],
            solution=[
                sql_step(
                    "SELECT p.paid_on, p.amount, p.reference FROM payments p JOIN invoices i ON i.id = p.invoice_id "
                    f"WHERE i.number = {quoted(invoice['number'])}"
                ),
                {
                    "answer": f"{payment['amount']} EUR on {payment['paid_on'].isoformat()} ({payment['reference']})."
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    by_day: dict = defaultdict(list)
    for p in payments:
        by_day[p["paid_on"]].append(p)
    day = rng.choice(sorted(by_day))
    received = by_day[day]
    total = sum((p["amount"] for p in received), Decimal(0))
    return Instance(
        prompt=(
            f"Post in #finance what came in on {day.isoformat()}: how many payments, their total in EUR, "
            "and each payment's reference."
        ),
        rubric_items=[
            stated(
                "count",
                f"#finance hears {len(received)} payments",
                "payments",
                len(received),
                1,
                where="#finance",
            ),
            stated("total", f"#finance hears the total {total}", "amount", total, 2, where="#finance"),
            *(
                stated(
                    f"reference-{p['reference']}",
                    f"The post lists {p['reference']}",
                    "reference",
                    p["reference"],
                    1,
                    where="#finance",
                )
                for p in received
            ),
        ],
        claims={
            "payments": count_kind("payments?"),
            # Each payment's amount adds up to the total: facts of the day, never charged.
            "amount": {"extract": "amount", "allow": [str(p["amount"]) for p in received]},
            "reference": {"values": sorted(p["reference"] for p in payments)},
        },
        solution=[
            sql_step(
                f"SELECT reference, amount, method FROM payments WHERE paid_on = DATE '{day.isoformat()}'"
            ),
            post_step(
                "finance",
                f"Received on {day.isoformat()}: {len(received)} payment{'s' if len(received) > 1 else ''}, "
                f"{total} EUR in total ({', '.join(p['reference'] for p in received)}).",
            ),
            {"answer": "Posted the day's receipts in #finance."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
