"""The documents in /workspace: prose from doctexts, spreadsheets computed from the world's data."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path

from . import catalog, doctexts, roster
from .docfmt import write_docx, write_ods, write_odt, write_xlsx
from .model import WorldData

CATEGORIES = ["travel", "lodging", "meals", "software", "equipment", "training", "other"]
MONTHS = [(2025, 1, "January"), (2025, 2, "February"), (2025, 3, "March")]
EMPLOYER_RATE = Decimal("0.21")


def write_all(w: WorldData, root: Path) -> list[Path]:
    rng = random.Random(w.seed + 2)
    files = {
        "policies/expense_policy.docx": lambda p: write_docx(p, "Expense Policy", doctexts.EXPENSE_POLICY),
        "policies/data_handling_policy.odt": lambda p: write_odt(
            p, "Data Handling Policy", doctexts.DATA_POLICY
        ),
        "sales/pricing_guidelines.docx": lambda p: write_docx(
            p, "Pricing Guidelines 2025", doctexts.PRICING_GUIDELINES
        ),
        "hr/onboarding_checklist.docx": lambda p: write_docx(
            p, "Onboarding Checklist (Operations)", doctexts.ONBOARDING_CHECKLIST
        ),
        "support/support_playbook.odt": lambda p: write_odt(p, "Support Playbook", doctexts.SUPPORT_PLAYBOOK),
        "reports/quarterly_report_template.docx": lambda p: write_docx(
            p, "Acme Analytics - Quarterly Report", doctexts.REPORT_TEMPLATE
        ),
        "meetings/2025-04-03_ops_sync.odt": lambda p: write_odt(
            p, "Ops Sync - 3 April 2025", doctexts.OPS_SYNC_NOTES
        ),
        "meetings/2025-03-27_leadership.docx": lambda p: write_docx(
            p, "Leadership Meeting - 27 March 2025", doctexts.LEADERSHIP_NOTES
        ),
        "finance/budget_2025.xlsx": lambda p: write_xlsx(
            p, budget_sheets(w, rng), {"Q1": [14, 12, 12, 12, 12, 11]}
        ),
        "finance/expense_report_2025-03.xlsx": lambda p: write_xlsx(
            p, expense_report(w), {"March 2025": [9, 22, 16, 12, 11, 52, 12, 10]}
        ),
        "finance/billing_export_2025-03.xlsx": lambda p: write_xlsx(
            p, billing_export(w), {"Invoices": [14, 26, 11, 11, 13, 13, 11, 15]}
        ),
        "finance/payroll_summary_2025-Q1.ods": lambda p: write_ods(p, *payroll_summary(w)),
        "sales/price_list_2025_H2.ods": lambda p: write_ods(p, *price_list_h2()),
    }
    written = []
    for rel, writer in files.items():
        path = root / rel
        writer(path)
        written.append(path)
    for empty in ("drafts", "reports"):
        (root / empty).mkdir(parents=True, exist_ok=True)
        (root / empty / ".keep").write_text("")
    return written


def _name(employee_id: int) -> str:
    return roster.BY_ID[employee_id].name


def q1_actuals(w: WorldData) -> dict[tuple[str, str], Decimal]:
    """Approved or paid claims with a Q1 2025 expense date, by (department name, category)."""
    totals: dict[tuple[str, str], Decimal] = {}
    for c in w["expense_claims"].dicts():
        if c["status"] in ("approved", "paid") and dt.date(2025, 1, 1) <= c["expense_date"] <= dt.date(
            2025, 3, 31
        ):
            key = (roster.dept_of(c["employee_id"]).name, c["category"])
            totals[key] = totals.get(key, Decimal(0)) + c["amount"]
    return totals


def budget_sheets(w: WorldData, rng: random.Random) -> dict:
    actual = q1_actuals(w)
    rows: list[list[object]] = [
        ["Department", "Category", "Q1 Budget", "Q1 Actual", "Variance", "Variance %"]
    ]
    for dept in roster.DEPARTMENTS:
        for cat in CATEGORIES:
            spent = float(actual.get((dept.name, cat), 0))
            budget = (
                max(250, round(spent * rng.uniform(0.75, 1.35) / 250) * 250)
                if spent
                else rng.choice((0, 250, 500))
            )
            r = len(rows) + 1
            rows.append([dept.name, cat, budget, None, f"=C{r}-D{r}", f'=IF(C{r}=0,"",E{r}/C{r})'])
    n = len(rows)
    rows.append(
        [
            "Total",
            "",
            f"=SUM(C2:C{n})",
            f"=SUM(D2:D{n})",
            f"=C{n + 1}-D{n + 1}",
            f'=IF(C{n + 1}=0,"",E{n + 1}/C{n + 1})',
        ]
    )
    summary: list[list[object]] = [["Department", "Q1 Budget", "Q1 Actual", "Variance"]]
    for dept in roster.DEPARTMENTS:
        r = len(summary) + 1
        summary.append(
            [dept.name, f"=SUMIF(Q1!A:A,A{r},Q1!C:C)", f"=SUMIF(Q1!A:A,A{r},Q1!D:D)", f"=B{r}-C{r}"]
        )
    notes = [
        ["Notes"],
        [
            "Q1 Actual: approved or paid expense claims with an expense date in Q1, by the claimant's department."
        ],
        ["Fill in column D of sheet Q1 only; columns E and F and the Summary sheet are formulas."],
    ]
    return {"Q1": rows, "Summary": summary, "Notes": notes}


def expense_report(w: WorldData) -> dict:
    rows: list[list[object]] = [
        [
            "Claim ID",
            "Employee",
            "Department",
            "Expense date",
            "Category",
            "Description",
            "Amount (EUR)",
            "Status",
        ]
    ]
    for c in w["expense_claims"].dicts():
        if c["status"] in ("approved", "paid") and c["expense_date"].strftime("%Y-%m") == "2025-03":
            rows.append(
                [
                    c["id"],
                    _name(c["employee_id"]),
                    roster.dept_of(c["employee_id"]).name,
                    c["expense_date"],
                    c["category"],
                    c["description"],
                    float(c["amount"]),
                    c["status"],
                ]
            )
    n = len(rows)
    rows.append(["Total", None, None, None, None, None, f"=SUM(G2:G{n})", None])
    by_cat: list[list[object]] = [["Category", "Amount (EUR)"]]
    for cat in CATEGORIES:
        r = len(by_cat) + 1
        by_cat.append([cat, f"=SUMIF('March 2025'!E:E,A{r},'March 2025'!G:G)"])
    return {"March 2025": rows, "By category": by_cat}


def billing_export(w: WorldData) -> dict:
    """March invoices as the billing system sees them, with the planted differences."""
    customers = w["customers"].by_id()
    paid: dict[int, tuple[Decimal, dt.date]] = {}
    for p in w["payments"].dicts():
        amount, last = paid.get(p["invoice_id"], (Decimal(0), p["paid_on"]))
        paid[p["invoice_id"]] = (amount + p["amount"], max(last, p["paid_on"]))
    recon = w.facts["recon_rows"]
    march = [i for i in w["invoices"].dicts() if i["issue_date"].strftime("%Y-%m") == "2025-03"]
    march.append(recon["missing_in_db"])
    march.sort(key=lambda i: i["number"])
    rows: list[list[object]] = [
        [
            "Invoice No",
            "Customer",
            "Issue date",
            "Due date",
            "Amount (EUR)",
            "Paid (EUR)",
            "Paid on",
            "Status",
        ]
    ]
    for inv in march:
        if inv["number"] == recon["missing_in_export"]["number"]:
            continue
        amount, paid_on = paid.get(inv["id"], (Decimal(0), None))
        status, customer, total = inv["status"], customers[inv["customer_id"]]["name"], inv["total"]
        if inv["number"] == recon["payment_not_recorded"]["number"]:
            amount, paid_on, status = total, dt.date(2025, 4, 1), "paid"
        if inv["number"] == recon["total_mismatch"]["number"]:
            total = _transpose(total)
        if inv["number"] == recon["customer_mismatch"]["number"]:
            customer = w.facts["recon_wrong_customer"]
        if inv["number"] == recon["void_in_export"]["number"]:
            status = "void"
        if status == "sent" and inv["due_date"] < roster.TODAY:
            status = "overdue"
        rows.append(
            [
                inv["number"],
                customer,
                inv["issue_date"],
                inv["due_date"],
                float(total),
                float(amount),
                paid_on,
                status,
            ]
        )
    return {"Invoices": rows}


def _transpose(total: Decimal) -> Decimal:
    """Swap the first two digits (a typical keying error): 3900.00 -> 9300.00."""
    digits = str(int(total))
    swapped = digits[1] + digits[0] + digits[2:] if digits[0] != digits[1] else digits[0] + "0" + digits[1:]
    return Decimal(swapped) + (total - int(total))


def payroll_summary(w: WorldData) -> tuple[dict, dict]:
    """Monthly payroll cost by department (Q1 2025): gross, employer costs (formula) and total."""
    header = ["Department", "Month", "Employees", "Gross salaries", "Employer costs (21%)", "Total cost"]
    rows: list[list[object]] = [header]
    values: dict[tuple[int, int], float] = {}
    for dept in roster.DEPARTMENTS:
        for year, month, label in MONTHS:
            staff = [
                p for p in roster.PEOPLE if p.dept == dept.code and (p.status != "terminated" or month == 1)
            ]
            gross = sum((Decimal(p.salary) / 12 for p in staff), Decimal(0)).quantize(Decimal("0.01"))
            r = len(rows)
            rows.append(
                [
                    dept.name,
                    f"{label} {year}",
                    len(staff),
                    float(gross),
                    f"=ROUND(D{r + 1}*0.21,2)",
                    f"=D{r + 1}+E{r + 1}",
                ]
            )
            employer = (gross * EMPLOYER_RATE).quantize(Decimal("0.01"))
            values[(r, 4)], values[(r, 5)] = float(employer), float(gross + employer)
    n = len(rows)
    total_gross = sum(Decimal(str(r[3])) for r in rows[1:])
    rows.append(["Company total", "Q1 2025", None, f"=SUM(D2:D{n})", f"=SUM(E2:E{n})", f"=SUM(F2:F{n})"])
    values[(n, 3)] = float(total_gross)
    values[(n, 4)] = float(sum(Decimal(str(values[(r, 4)])) for r in range(1, n)))
    values[(n, 5)] = float(sum(Decimal(str(values[(r, 5)])) for r in range(1, n)))
    rows.append([])
    rows.append(
        [
            "CONFIDENTIAL - payroll data. Finance leadership and Executive team only (Data Handling Policy 2.2)."
        ]
    )
    return {"Payroll Q1 2025": rows}, {"Payroll Q1 2025": values}


def price_list_h2() -> tuple[dict, dict]:
    rows: list[list[object]] = [
        ["SKU", "Product", "Unit", "Price H1 2025 (EUR)", "Price H2 2025 (EUR)", "Change"]
    ]
    values: dict[tuple[int, int], float] = {}
    for sku, name, _cat, unit, price, active in catalog.PRODUCTS:
        if not active:
            continue
        new = catalog.H2_2025_PRICES[sku]
        r = len(rows)
        rows.append([sku, name, unit, price, new, f"=(E{r + 1}-D{r + 1})/D{r + 1}"])
        values[(r, 5)] = round((new - price) / price, 6)
    rows.append([])
    rows.append(
        [
            "Price list 'Standard 2025 H2', EUR, valid from 1 July 2025. Replaces 'Standard 2025 H1' "
            "(valid until 30 June 2025). Prepared by Julia Novak."
        ]
    )
    return {"Standard 2025 H2": rows}, {"Standard 2025 H2": values}
