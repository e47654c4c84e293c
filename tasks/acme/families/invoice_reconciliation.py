"""Reconcile a billing export against the database. Level 1: a CSV export with one differing invoice, named in the answer; level 2: an XLSX export with several kinds of differences, reported line by line in #finance."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L1, by_id, post_step, sql_step, stated
from families._finance import LIMITS_L2, csv_bytes, eur, month_label, paid_by_invoice, xlsx_bytes
from gym.families import Instance

TITLE = "Reconcile a billing export"
LEVELS = (1, 2)
SPLIT = "train"
# What differs on a line of the #finance report, as people say it (a value of the kind per invoice).
_NOT_THERE = (
    r"\b(?:missing|absent|not (?:found|present|recorded|included)|no record)\W(?:[^\n]{{0,15}}\W)?{side}\b"
)
_DB = r"(?:database|db|erp|our (?:system|records))"
_EXPORT = r"(?:billing(?:'s)? )?export"
DIFFERENCE = {
    "values": [
        {
            "value": "missing from the database",
            "regex": _NOT_THERE.format(side=_DB)
            + rf"|\bonly in (?:the )?{_EXPORT}\b|\bnot in (?:the |our )?{_DB}\b",
        },
        {
            "value": "missing from the export",
            "regex": _NOT_THERE.format(side=_EXPORT)
            + rf"|\bonly in (?:the |our )?{_DB}\b|\bnot in (?:the )?{_EXPORT}\b",
        },
        {"value": "amount", "regex": r"\b(?:amount|total)s?\b"},
        {"value": "customer", "regex": r"\bcustomers?\b"},
        {"value": "void", "regex": r"\bvoid(?:ed)?\b"},
        # Not the bare word "paid": that would make every success word a difference.
        {
            "value": "payment",
            "regex": r"\bpayments?\b|\bpaid in full\b|\b(?:marked|shown|listed) (?:as )?paid\b",
        },
    ]
}
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
        # What differs is two values of a kind: the export's and the database's.
        field, claim, column, ours = {
            "amount": ("amount", "amount", 4, invoice["total"]),
            "customer": ("customer", "customer", 1, export_name(customers, invoice)),
            "status": ("status", "invoice_status", 6, invoice["status"]),
            "due": ("due date", "date", 3, invoice["due_date"]),
        }[kind]
        if kind == "amount":
            row[4] = _transpose(invoice["total"])
        elif kind == "customer":
            row[1] = rng.choice([n for n in names if n != row[1]])
        elif kind == "status":
            row[6] = "void" if invoice["status"] != "void" else "sent"
        else:
            row[3] = invoice["due_date"] + dt.timedelta(days=rng.choice([-14, 15, 30]))
        theirs = row[column]

        def shown(value) -> str:
            return eur(value) if kind == "amount" else str(value).replace("_", " ")

        what = f"{field} {shown(theirs)} in the export vs {shown(ours)} in the database"
        path = f"finance/billing_recheck_{year}-{month:02d}.csv"
        body = [header] + [[*r[:4], f"{r[4]:.2f}", f"{r[5]:.2f}", r[6]] for r in export.values()]
        return Instance(
            prompt=(
                f"Billing re-sent their {label} invoice export: /workspace/{path}. Exactly one invoice in it does not "
                "match our database. Which one, and what differs? Don't change anything."
            ),
            files={path: csv_bytes(body)},
            rubric_items=[
                stated("invoice", f"The answer names {invoice['number']}", "invoice", invoice["number"]),
                stated("ours", f"... and what differs: {ours} in the database", claim, ours, 1),
                stated("theirs", f"... against {theirs} in the export", claim, theirs, 1),
            ],
            solution=[
                {"tool": "office.read_sheet", "args": {"path": path}},
                sql_step(DB_SQL.format(first=first)),
                {"answer": f"{invoice['number']} differs: {what}. Every other invoice matches."},
            ],
            apps=["db", "office"],
            limits=LIMITS_L1,
        )
    kinds = rng.sample(["missing_in_db", "missing_in_export", "amount", "customer", "void", "paid"], 6)
    pool = list(rows)
    rng.shuffle(pool)
    found = []  # (number, what differs, description)
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
                (number, "missing from the database", f"only in the export ({customer}, {eur(total)} EUR)")
            )
            continue
        if not candidates:
            continue
        invoice = candidates[0]
        pool.remove(invoice)
        number, row = invoice["number"], export[invoice["number"]]
        if kind == "missing_in_export":
            del export[number]
            found.append((number, "missing from the export", "in the database but missing from the export"))
        elif kind == "amount":
            row[4] = _transpose(invoice["total"])
            found.append(
                (number, "amount", f"amount differs: export {eur(row[4])}, database {eur(invoice['total'])}")
            )
        elif kind == "customer":
            row[1] = rng.choice([n for n in names if n != row[1]])
            found.append(
                (
                    number,
                    "customer",
                    f"customer differs: export {row[1]}, database {export_name(customers, invoice)}",
                )
            )
        elif kind == "void":
            row[6] = "void"
            found.append(
                (number, "void", f"void in the export, {invoice['status'].replace('_', ' ')} in the database")
            )
        else:
            row[5], row[6] = invoice["total"], "paid"
            found.append(
                (
                    number,
                    "payment",
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
        # A matching invoice reported is a wrong invoice; what differs counts on its invoice's line only.
        rubric_items=[
            item
            for number, differs, what in found
            for item in (
                stated(
                    f"reported-{number}",
                    f"{number} is reported in #finance ({what})",
                    "invoice",
                    number,
                    where="#finance",
                ),
                stated(
                    f"explained-{number}",
                    f"The line for {number} says what differs ({what})",
                    "difference",
                    differs,
                    where="#finance",
                    about=number,
                ),
            )
        ],
        claims={"difference": DIFFERENCE},
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
        apps=["db", "chat", "office"],
        limits=LIMITS_L2,
    )


def export_name(customers, invoice) -> str:
    return customers[invoice["customer_id"]]["name"]
