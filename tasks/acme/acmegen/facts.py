"""Answers derived from the generated world, for writing rubrics and reference solutions.

`python tasks/acme/generate.py --facts` prints them as JSON. Rubrics carry the values
they need literally; tests/tasks check that the rubrics and these facts agree.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from . import roster
from .documents import payroll_summary, q1_actuals
from .expenses import PENDING
from .model import WorldData
from .roster import TODAY

Q1 = (dt.date(2025, 1, 1), dt.date(2025, 3, 31))


def _in_q1(date: dt.date) -> bool:
    return Q1[0] <= date <= Q1[1]


def paid_by_invoice(w: WorldData) -> dict[int, Decimal]:
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for p in w["payments"].dicts():
        paid[p["invoice_id"]] += p["amount"]
    return paid


def overdue(w: WorldData) -> dict[str, Decimal]:
    """Outstanding amount per customer over invoices past due and not fully paid (sent/partially_paid)."""
    paid = paid_by_invoice(w)
    names = {c["id"]: c["name"] for c in w["customers"].dicts()}
    out: dict[str, Decimal] = defaultdict(Decimal)
    for inv in w["invoices"].dicts():
        if inv["status"] in ("sent", "partially_paid") and inv["due_date"] < TODAY:
            out[names[inv["customer_id"]]] += inv["total"] - paid[inv["id"]]
    return dict(sorted(out.items()))


def outstanding(w: WorldData, customer_id: int) -> Decimal:
    paid = paid_by_invoice(w)
    return sum(
        (
            inv["total"] - paid[inv["id"]]
            for inv in w["invoices"].dicts()
            if inv["customer_id"] == customer_id and inv["status"] in ("sent", "partially_paid")
        ),
        Decimal(0),
    )


def sla_breaches(w: WorldData, month: str = "2025-03") -> dict:
    hours = {s["priority"]: s["first_response_hours"] for s in w["sla_policies"].dicts()}
    breaches = [
        t
        for t in w["support_tickets"].dicts()
        if t["created_at"].strftime("%Y-%m") == month
        and t["first_response_at"]
        and (t["first_response_at"] - t["created_at"]) > dt.timedelta(hours=hours[t["priority"]])
    ]
    by_priority: dict[str, int] = defaultdict(int)
    by_assignee: dict[str, int] = defaultdict(int)
    for t in breaches:
        by_priority[t["priority"]] += 1
        by_assignee[roster.BY_ID[t["assignee_id"]].name] += 1
    total = sum(1 for t in w["support_tickets"].dicts() if t["created_at"].strftime("%Y-%m") == month)
    return {
        "tickets": total,
        "breaches": len(breaches),
        "by_priority": dict(by_priority),
        "by_assignee": dict(sorted(by_assignee.items(), key=lambda kv: -kv[1])),
    }


def march_won(w: WorldData) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for d in w["deals"].dicts():
        if d["stage_id"] == 6 and d["closed_on"].strftime("%Y-%m") == "2025-03":
            row = out.setdefault(roster.BY_ID[d["owner_id"]].name, {"deals": 0, "amount": Decimal(0)})
            row["deals"] += 1
            row["amount"] += d["amount"]
    return dict(sorted(out.items()))


def q1_report(w: WorldData) -> dict:
    invoices = [
        i for i in w["invoices"].dicts() if _in_q1(i["issue_date"]) and i["status"] not in ("void", "draft")
    ]
    won = [d for d in w["deals"].dicts() if d["stage_id"] == 6 and _in_q1(d["closed_on"])]
    _sheets, values = payroll_summary(w)
    payroll_rows = _sheets["Payroll Q1 2025"]
    total_row = next(i for i, r in enumerate(payroll_rows) if r and r[0] == "Company total")
    return {
        "revenue_invoiced": sum((i["total"] for i in invoices), Decimal(0)),
        "cash_collected": sum(
            (p["amount"] for p in w["payments"].dicts() if _in_q1(p["paid_on"])), Decimal(0)
        ),
        "deals_won": len(won),
        "won_value": sum((d["amount"] for d in won), Decimal(0)),
        "tickets_opened": sum(1 for t in w["support_tickets"].dicts() if _in_q1(t["created_at"].date())),
        "headcount": sum(1 for e in w["employees"].dicts() if e["status"] in ("active", "on_leave")),
        "personnel_costs": Decimal(str(values["Payroll Q1 2025"][(total_row, 5)])).quantize(Decimal("0.01")),
        "expenses_approved": sum(q1_actuals(w).values(), Decimal(0)),
    }


def pending_claims(w: WorldData) -> list[dict]:
    ids = {(c["employee_id"], c["description"]): c["id"] for c in w["expense_claims"].dicts()}
    return [
        {
            "id": ids[(roster.BY_USER[p.user].id, p.description)],
            "user": p.user,
            "outcome": p.outcome,
            "rule": p.rule,
            "amount": p.amount,
            "spent": p.spent,
        }
        for p in PENDING
    ]


def collect(w: WorldData) -> dict:
    return {
        "recon": w.facts["recon"],
        "recon_wrong_customer": w.facts["recon_wrong_customer"],
        "initech_invoice": w.facts["initech_invoice"],
        "globex_overdue": w.facts["globex_overdue"],
        "globex_outstanding": outstanding(w, 1),
        "globex_unresolved_tickets": sum(
            1
            for t in w["support_tickets"].dicts()
            if t["customer_id"] == 1 and t["status"] not in ("resolved", "closed")
        ),
        "overdue": overdue(w),
        "overdue_total": sum(overdue(w).values(), Decimal(0)),
        "sla_march": sla_breaches(w),
        "march_won": march_won(w),
        "q1_report": q1_report(w),
        "q1_actuals": {f"{d}/{c}": v for (d, c), v in sorted(q1_actuals(w).items())},
        "pending_claims": pending_claims(w),
        "payroll_by_department": _payroll_by_department(w),
    }


def _payroll_by_department(w: WorldData) -> dict[str, str]:
    sheets, values = payroll_summary(w)
    rows = sheets["Payroll Q1 2025"]
    out: dict[str, Decimal] = defaultdict(Decimal)
    for i, r in enumerate(rows[1:], 1):
        if r and r[0] in {d.name for d in roster.DEPARTMENTS}:
            out[r[0]] += Decimal(str(values["Payroll Q1 2025"][(i, 5)]))
    return {k: str(v.quantize(Decimal("0.01"))) for k, v in out.items()}
