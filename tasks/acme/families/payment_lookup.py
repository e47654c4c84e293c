"""A payment received. Level 0: how it was paid; level 1: when and how much; level 2: a day's receipts posted to #finance."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    by_id,
    count_regex,
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

TITLE = "A payment we received"
LEVELS = (0, 1, 2)
SPLIT = "train"
METHODS = {"bank_transfer": r"bank[ _]transfer", "card": r"card", "direct_debit": r"direct[ _]debit"}


def generate(world, rng, level: int) -> Instance:
    payments = world["payments"].dicts()
    invoices = by_id(world, "invoices")
    if level == 0:
        payment = rng.choice(payments)
        method = payment["method"]
        return Instance(
            prompt=f"Which payment method was used for the payment with reference {payment['reference']}?",
            rubric_items=[
                answer("method", f"The answer says {method}", rf"(?i:\b{METHODS[method]}\b)"),
                no_spray(
                    [rf"(?i:\b{m}\b)" for k, m in METHODS.items() if k != method], "other payment methods"
                ),
            ],
            solution=[
                sql_step(
                    f"SELECT reference, method FROM payments WHERE reference = {quoted(payment['reference'])}"
                ),
                {"answer": f"Payment {payment['reference']} was made by {method.replace('_', ' ')}."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    if level == 1:
        by_invoice: dict[int, list[dict]] = defaultdict(list)
        for p in payments:
            by_invoice[p["invoice_id"]].append(p)
        single = sorted(i for i, ps in by_invoice.items() if len(ps) == 1)  # one payment: one date
        invoice = invoices[rng.choice(single)]
        payment = by_invoice[invoice["id"]][0]
        others = sorted({money_regex(p["amount"]) for p in payments if p["amount"] != payment["amount"]})
        return Instance(
            prompt=f"When did we receive the payment for invoice {invoice['number']}, and how much was it?",
            rubric_items=[
                answer("date", f"The answer gives {payment['paid_on']}", date_regex(payment["paid_on"])),
                answer("amount", f"The answer gives {payment['amount']}", money_regex(payment["amount"]), 3),
                no_spray(others, "other payments' amounts"),
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
            apps=["postgres"],
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
            posted(
                "summary",
                f"#finance hears {len(received)} payments totalling {total}",
                "finance",
                [count_regex(len(received), "payments?"), money_regex(total)],
                3,
            ),
            posted(
                "references",
                "The post lists every reference of the day",
                "finance",
                [text_regex(p["reference"]) for p in received],
                2,
            ),
        ],
        solution=[
            sql_step(
                f"SELECT reference, amount, method FROM payments WHERE paid_on = DATE '{day.isoformat()}'"
            ),
            post_step(
                "finance",
                f"Received on {day.isoformat()}: {len(received)} payments, {total} EUR in total "
                f"({', '.join(p['reference'] for p in received)}).",
            ),
            {"answer": "Posted the day's receipts in #finance."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
