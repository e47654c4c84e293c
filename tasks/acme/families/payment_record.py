"""Record a payment that came in. Level 0: the payment row; level 1: also the invoice's new status (paid or partially paid)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, execute_step, quoted, sql_step, state
from gym.families import Instance

TITLE = "Record an incoming payment"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for p in world["payments"].dicts():
        paid[p["invoice_id"]] += p["amount"]
    open_ones = [i for i in world["invoices"].dicts() if i["status"] in ("sent", "partially_paid")]
    invoice = rng.choice(open_ones)
    owed = invoice["total"] - paid[invoice["id"]]
    # A part payment on a partly paid invoice would leave its status as it was: nothing for the
    # status item to see (found by the validate bench), so such an invoice is paid in full.
    full = level == 0 or rng.random() < 0.5 or invoice["status"] == "partially_paid"
    amount = owed if full else (owed / 2).quantize(Decimal("0.01"))
    day = dt.date(2025, 4, 1) + dt.timedelta(days=rng.randrange(20))
    reference = f"BT-{day:%m%d}-{invoice['number'][-4:]}"
    status = "paid" if full else "partially_paid"
    where = f"reference = {quoted(reference)}"
    items = [
        state(
            "recorded", f"A payment {reference} exists", f"SELECT count(*) FROM payments WHERE {where}", 1, 2
        ),
        state(
            "details",
            f"It is {amount} EUR by bank transfer on {day}, against {invoice['number']}",
            f"SELECT count(*) FROM payments p JOIN invoices i ON i.id = p.invoice_id WHERE p.{where} AND p.amount = {amount} "
            f"AND p.method = 'bank_transfer' AND p.paid_on = DATE '{day.isoformat()}' AND i.number = {quoted(invoice['number'])}",
            1,
            3,
        ),
    ]
    steps = [
        sql_step(f"SELECT id, total, status FROM invoices WHERE number = {quoted(invoice['number'])}"),
        execute_step(
            "INSERT INTO payments (invoice_id, paid_on, amount, method, reference) "
            f"VALUES ({invoice['id']}, DATE '{day.isoformat()}', {amount}, 'bank_transfer', {quoted(reference)})"
        ),
    ]
    prompt = (
        f"A bank transfer of {amount} EUR for invoice {invoice['number']} arrived on {day.isoformat()} with the "
        f"reference {reference}. Record the payment."
    )
    allow = [{"table": "payments", "may": ["add"], "at_most": 1}]  # the one payment it records
    if level == 1:
        prompt += " Then set the invoice's status: paid if nothing is owed any more, partially_paid otherwise (earlier payments count)."
        items.append(
            state(
                "status",
                f"{invoice['number']} is {status}",
                f"SELECT status FROM invoices WHERE id = {invoice['id']}",
                status,
                3,
            )
        )
        steps.insert(
            1, sql_step(f"SELECT coalesce(sum(amount), 0) FROM payments WHERE invoice_id = {invoice['id']}")
        )
        steps.append(execute_step(f"UPDATE invoices SET status = '{status}' WHERE id = {invoice['id']}"))
        allow.append({"table": "invoices", "columns": ["status"], "at_most": 1})
    return Instance(
        prompt=prompt,
        rubric_items=items,
        solution=[*steps, {"answer": f"Recorded {reference}."}],
        damage={"allow": allow},
        apps=["db"],
        limits=LIMITS_L0 if level == 0 else LIMITS_L1,
    )
