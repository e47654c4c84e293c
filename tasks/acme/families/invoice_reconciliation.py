"""Reconcile a billing export against the database. Level 1: a CSV export with one differing invoice, named in the answer; level 2: an XLSX export with several kinds of differences, reported line by line in #finance."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L1,
    answer,
    by_id,
    date_regex,
    money_regex,
    no_spray,
    post_step,
    sql_step,
    text_regex,
)
from families._finance import (
    LIMITS_L2,
    check,
    csv_bytes,
    eur,
    month_label,
    paid_by_invoice,
    together,
    xlsx_bytes,
)
from gym.families import Instance

TITLE = "Reconcile a billing export"
LEVELS = (1, 2)
SPLIT = "train"
MISSING = r"(missing|not (found |present )?in|absent|no record|not exist|only in (the )?{side})"
DB_SQL = (
    "SELECT i.number, c.name AS customer, i.issue_date, i.due_date, i.total, i.status, coalesce(sum(p.amount), 0) AS paid "
    "FROM invoices i JOIN customers c ON c.id = i.customer_id LEFT JOIN payments p ON p.invoice_id = i.id "
    "WHERE i.issue_date >= DATE '{first}' AND i.issue_date < DATE '{first}' + interval '1 month' "
    "GROUP BY i.id, c.name ORDER BY i.number"
)


def _transpose(total: Decimal) -> Decimal:
    """A keying error: the first two digits swapped (3900 -> 9300), or a digit dropped in when they are equal."""
    digits = str(int(total))
    swapped = digits[1] + digits[0] + digits[2:] if digits[0] != digits[1] else digits[0] + "0" + digits[1:]
    return Decimal(swapped) + (total - int(total))


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    paid = paid_by_invoice(world)
    by_month: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for i in sorted(world["invoices"].dicts(), key=lambda i: i["number"]):
        by_month[i["issue_date"].year, i["issue_date"].month].append(i)
    year, month = rng.choice(sorted(m for m, ls in by_month.items() if len(ls) >= 8))
    rows = by_month[year, month]
    first = f"{year}-{month:02d}-01"
    label = month_label(year, month)
    export = {
        i["number"]: [
            i["number"],
            customers[i["customer_id"]]["name"],
            i["issue_date"],
            i["due_date"],
            i["total"],
            paid[i["id"]],
            i["status"],
        ]
        for i in rows
    }
    names = sorted(c["name"] for c in customers.values())
    header = ["Invoice No", "Customer", "Issue date", "Due date", "Amount (EUR)", "Paid (EUR)", "Status"]
    if level == 1:
        invoice = rng.choice(rows)
        row = export[invoice["number"]]
        kind = rng.choice(["amount", "customer", "status", "due"])
        if kind == "amount":
            row[4] = _transpose(invoice["total"])
            what, rx = (
                f"amount {eur(row[4])} in the export vs {eur(invoice['total'])} in the database",
                rf"(amount|total|{money_regex(invoice['total'])}|{money_regex(row[4])})",
            )
        elif kind == "customer":
            row[1] = rng.choice([n for n in names if n != row[1]])
            what, rx = (
                f"customer {row[1]} in the export vs {export_name(customers, invoice)} in the database",
                rf"(customer|{text_regex(row[1])}|{text_regex(export_name(customers, invoice))})",
            )
        elif kind == "status":
            row[6] = "void" if invoice["status"] != "void" else "sent"
            what, rx = (
                f"status {row[6]} in the export vs {invoice['status']} in the database",
                rf"(status|{row[6]})",
            )
        else:
            row[3] = invoice["due_date"] + dt.timedelta(days=rng.choice([-14, 15, 30]))
            what, rx = (
                f"due date {row[3]} in the export vs {invoice['due_date']} in the database",
                rf"(due|{date_regex(row[3])})",
            )
        path = f"finance/billing_recheck_{year}-{month:02d}.csv"
        body = [header] + [[*r[:4], f"{r[4]:.2f}", f"{r[5]:.2f}", r[6]] for r in export.values()]
        return Instance(
            prompt=(
                f"Billing re-sent their {label} invoice export: /workspace/{path}. Exactly one invoice in it does not "
                "match our database. Which one, and what differs? Don't change anything."
            ),
            files={path: csv_bytes(body)},
            rubric_items=[
                answer("invoice", f"The answer names {invoice['number']}", text_regex(invoice["number"]), 3),
                answer(
                    "what",
                    f"... and says what differs: {what}",
                    together(text_regex(invoice["number"]), rx, 200),
                    1,
                ),
                no_spray([text_regex(n) for n in export if n != invoice["number"]], "invoices that match"),
            ],
            solution=[
                {"tool": "office.read_sheet", "args": {"path": path}},
                sql_step(DB_SQL.format(first=first)),
                {"answer": f"{invoice['number']} differs: {what}. Every other invoice matches."},
            ],
            apps=["postgres", "office"],
            limits=LIMITS_L1,
        )
    kinds = rng.sample(["missing_in_db", "missing_in_export", "amount", "customer", "void", "paid"], 6)
    pool = list(rows)
    rng.shuffle(pool)
    found = []  # (number, regex, description)
    for kind in kinds:
        if len(found) == 4:
            break
        candidates = [i for i in pool if kind != "paid" or (i["status"] == "sent" and not paid[i["id"]])]
        if kind == "void":
            candidates = [i for i in candidates if i["status"] != "void"]
        if kind == "missing_in_db":
            last = max(
                int(i["number"][-4:]) for ls in by_month.values() for i in ls if i["number"][4:8] == str(year)
            )
            number = f"INV-{year}-{last + 1 + len(found):04d}"  # the billing system's number we never got
            customer = rng.choice(names)
            total = Decimal(rng.randrange(20, 400) * 100)
            day = dt.date(year, month, rng.randint(3, 27))
            export[number] = [number, customer, day, day + dt.timedelta(days=30), total, Decimal(0), "sent"]
            found.append(
                (
                    number,
                    MISSING.format(side="(billing|export)"),
                    f"only in the export ({customer}, {eur(total)} EUR)",
                )
            )
            continue
        if not candidates:
            continue
        invoice = candidates[0]
        pool.remove(invoice)
        number, row = invoice["number"], export[invoice["number"]]
        if kind == "missing_in_export":
            del export[number]
            found.append(
                (
                    number,
                    MISSING.format(side="(database|db|erp)"),
                    "in the database but missing from the export",
                )
            )
        elif kind == "amount":
            row[4] = _transpose(invoice["total"])
            found.append(
                (
                    number,
                    rf"(amount|total|{money_regex(row[4])}|{money_regex(invoice['total'])})",
                    f"amount differs: export {eur(row[4])}, database {eur(invoice['total'])}",
                )
            )
        elif kind == "customer":
            row[1] = rng.choice([n for n in names if n != row[1]])
            found.append(
                (
                    number,
                    rf"(customer|{text_regex(row[1])})",
                    f"customer differs: export {row[1]}, database {export_name(customers, invoice)}",
                )
            )
        elif kind == "void":
            row[6] = "void"
            found.append((number, "void", f"void in the export, {invoice['status']} in the database"))
        else:
            row[5], row[6] = invoice["total"], "paid"
            found.append(
                (
                    number,
                    "(paid|payment)",
                    f"export says paid in full ({eur(invoice['total'])} EUR); the database has no payment",
                )
            )
    found.sort()
    path = f"finance/billing_recheck_{year}-{month:02d}.xlsx"
    body = [header] + [[*r[:4], float(r[4]), float(r[5]), r[6]] for _, r in sorted(export.items())]
    return Instance(
        prompt=(
            f"Billing sent a corrected {label} invoice export: /workspace/{path}. Please reconcile it against our "
            "database and post the differences in #finance: one line per invoice, saying what differs. Don't change "
            "the database; Felix wants to review first."
        ),
        files={path: xlsx_bytes({"Invoices": body})},
        rubric_items=[
            item
            for number, rx, what in found
            for item in (
                check(
                    f"reported-{number}",
                    f"{number} is reported in #finance ({what})",
                    "posted",
                    {"channel": "finance", "regex": text_regex(number)},
                    2,
                    "differences",
                ),
                check(
                    f"explained-{number}",
                    f"The line for {number} says what differs ({what})",
                    "posted_line",
                    {"channel": "finance", "all_of": [text_regex(number), rx]},
                    2,
                    "differences",
                ),
            )
        ]
        + [
            check(
                "no-false-alarms",
                "Penalty: an invoice that matches is reported as a difference",
                "no_other_matches_posted",
                {"channel": "finance", "regex": r"INV-\d{4}-\d{4}", "allowed": [n for n, _, _ in found]},
                -3,
                "penalties",
                reason="A penalty: it holds unless a matching invoice is reported.",
            )
        ],
        solution=[
            {"tool": "office.read_sheet", "args": {"path": path}},
            sql_step(DB_SQL.format(first=first)),
            post_step(
                "finance",
                f"@felix.hartmann {label} billing export vs. database - {len(found)} differences, nothing changed in the DB:\n"
                + "\n".join(f"- {n}: {what}" for n, _, what in found)
                + "\nAll other invoices match.",
            ),
            {"answer": f"Posted the {len(found)} differences in #finance; the database is unchanged."},
        ],
        apps=["postgres", "chat", "office"],
        limits=LIMITS_L2,
    )


def export_name(customers, invoice) -> str:
    return customers[invoice["customer_id"]]["name"]
