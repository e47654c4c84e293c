"""Invoices (one per won deal), their lines and payments; planted anomalies for the finance tasks."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from .model import WorldData
from .roster import TODAY
from .sqlwrite import money

NET_DAYS = 30
METHODS = ("bank_transfer", "bank_transfer", "direct_debit", "card")


def build(w: WorldData) -> None:
    _invoices(w)
    _payments(w)
    _plant(w)


def _invoices(w: WorldData) -> None:
    rng = w.rng
    won = [d for d in w["deals"].dicts() if d["stage_id"] == 6]
    issued = []
    for deal in won:
        date = min(deal["closed_on"] + dt.timedelta(days=rng.randint(0, 3)), TODAY - dt.timedelta(days=3))
        issued.append((date, deal["id"], deal))
    issued.sort(key=lambda x: (x[0], x[1]))
    invoices = w.table(
        "invoices",
        "id",
        "number",
        "customer_id",
        "deal_id",
        "issue_date",
        "due_date",
        "currency",
        "total",
        "status",
    )
    lines = w.table("invoice_lines", "id", "invoice_id", "product_id", "quantity", "unit_price", "line_total")
    per_year: dict[int, int] = {}
    for inv_id, (date, deal_id, deal) in enumerate(issued, 1):
        per_year[date.year] = per_year.get(date.year, 0) + 1
        number = f"INV-{date.year}-{per_year[date.year]:04d}"
        total = Decimal(0)
        for product_id, qty, price in w.deal_lines[deal_id]:
            line_total = money(qty * price)
            total += line_total
            lines.add(len(lines.rows) + 1, inv_id, product_id, qty, price, line_total)
        status = "draft" if date >= TODAY - dt.timedelta(days=4) else "sent"
        invoices.add(
            inv_id,
            number,
            deal["customer_id"],
            deal_id,
            date,
            date + dt.timedelta(days=NET_DAYS),
            "EUR",
            money(total),
            status,
        )


def _payments(w: WorldData) -> None:
    rng = w.rng
    invoices = w["invoices"]
    payments = w.table("payments", "id", "invoice_id", "paid_on", "amount", "method", "reference")
    rows = []
    for idx, inv in enumerate(invoices.dicts()):
        if inv["status"] == "draft":
            continue
        roll = rng.random()
        if roll < 0.03:
            invoices.rows[idx] = _with(invoices, inv, status="void")
            continue
        overdue = inv["due_date"] < TODAY
        paid_on = inv["issue_date"] + dt.timedelta(days=rng.randint(5, 48))
        if paid_on >= TODAY or (not overdue and roll < 0.65) or (overdue and roll > 0.92):
            continue  # not paid (yet)
        method = rng.choice(METHODS)
        if overdue and roll > 0.86:
            rows.append((inv["id"], paid_on, money(inv["total"] / 2), method))
            invoices.rows[idx] = _with(invoices, inv, status="partially_paid")
            continue
        rows.append((inv["id"], paid_on, inv["total"], method))
        invoices.rows[idx] = _with(invoices, inv, status="paid")
    rows.sort(key=lambda r: (r[1], r[0]))
    for pay_id, (invoice_id, paid_on, amount, method) in enumerate(rows, 1):
        payments.add(pay_id, invoice_id, paid_on, amount, method, _reference(method, pay_id))


def _reference(method: str, pay_id: int) -> str:
    prefix = {"bank_transfer": "BT", "direct_debit": "DD", "card": "CC"}[method]
    return f"{prefix}-{700000 + pay_id * 37}"


def _with(table, row: dict, **changes) -> tuple:
    row = {**row, **changes}
    return tuple(row[c] for c in table.columns)


def _plant(w: WorldData) -> None:
    """Globex overdue, Initech paid twice, and the March invoices the reconciliation task is about."""
    invoices, payments = w["invoices"], w["payments"]
    inv = invoices.dicts()

    # Initech: the deal's invoice was collected twice by direct debit.
    initech = next(i for i in inv if i["deal_id"] == w.facts["initech_deal"])
    payments.rows = [r for r in payments.rows if r[1] != initech["id"]]
    for k, paid_on in enumerate((dt.date(2025, 3, 21), dt.date(2025, 3, 24))):
        payments.add(
            len(payments.rows) + 1000 + k,
            initech["id"],
            paid_on,
            initech["total"],
            "direct_debit",
            f"DD-{initech['number'][4:]}-{k + 1}",
        )
    invoices.rows[inv.index(initech)] = _with(invoices, initech, status="paid")
    w.facts["initech_invoice"] = initech["number"]

    # Globex: its oldest 2025 invoice is overdue and unpaid.
    target = next(i for i in inv if i["deal_id"] == w.facts["globex_expansion_deal"])
    payments.rows = [r for r in payments.rows if r[1] != target["id"]]
    invoices.rows[inv.index(target)] = _with(invoices, target, status="sent")
    w.facts["globex_overdue"] = target["number"]

    march = [i for i in inv if i["issue_date"].strftime("%Y-%m") == "2025-03" and i["status"] != "void"]
    kinds = (
        "missing_in_db",  # in the billing export, not in the ERP database
        "missing_in_export",  # in the database only
        "payment_not_recorded",  # export says paid, database has no payment
        "total_mismatch",
        "customer_mismatch",
        "void_in_export",
    )
    # Spread over the month; other seeds may have fewer March invoices than the default world's 19.
    picks = [i if len(march) > 15 else i * len(march) // 16 for i in (2, 5, 8, 11, 13, 15)]
    recon = {kind: march[i] for kind, i in zip(kinds, picks, strict=True)}
    unpaid = (recon["payment_not_recorded"], recon["void_in_export"])
    payments.rows = [r for r in payments.rows if r[1] not in {u["id"] for u in unpaid}]
    for u in unpaid:
        invoices.rows[inv.index(u)] = _with(invoices, u, status="sent")
    wrong = recon["customer_mismatch"]["customer_id"] % len(w["customers"].rows) + 1
    w.facts["recon_wrong_customer"] = w["customers"].by_id()[wrong]["name"]
    w.facts["recon"] = {k: v["number"] for k, v in recon.items()}
    w.facts["recon_rows"] = {k: dict(v) for k, v in recon.items()}
    dropped = recon["missing_in_db"]["id"]
    invoices.rows = [r for r in invoices.rows if r[0] != dropped]
    w["invoice_lines"].rows = [r for r in w["invoice_lines"].rows if r[1] != dropped]
    payments.rows = [r for r in payments.rows if r[1] != dropped]
    # Renumber payments by date so ids read naturally.
    rows = sorted(payments.rows, key=lambda r: (r[2], r[1], r[5]))
    payments.rows = [(i, *r[1:]) for i, r in enumerate(rows, 1)]
