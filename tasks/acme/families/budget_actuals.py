"""Expense actuals against a budget. Level 1: a department's approved and paid claims in a month or quarter; level 2: fill a department's budget workbook with those actuals per category, keeping its formulas."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L1, MONTHS, by_id, item, quoted, sql_step, stated
from families._finance import LIMITS_L2, eur, month_after, xlsx_bytes
from gym.families import Instance

TITLE = "Expense actuals against the budget"
LEVELS = (1, 2)
SPLIT = "train"
CATEGORIES = ("travel", "lodging", "meals", "software", "equipment", "training", "other")
COUNTED = ("approved", "paid")


def _periods(day: dt.date) -> list[tuple[int, int, int]]:
    """The month (year, month, 1) and the quarter (year, first month, 3) a day falls in."""
    return [(day.year, day.month, 1), (day.year, day.month - (day.month - 1) % 3, 3)]


def _label(period: tuple[int, int, int]) -> str:
    year, month, span = period
    return f"{MONTHS[month - 1]} {year}" if span == 1 else f"Q{(month + 2) // 3} {year}"


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    departments = by_id(world, "departments")
    actual: dict[tuple, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for c in world["expense_claims"].dicts():
        dept = people[c["employee_id"]]["department_id"]
        for period in _periods(c["expense_date"]):
            if c["status"] in COUNTED:
                actual[period, dept][c["category"]] += c["amount"]
    totals = {key: sum(cats.values(), Decimal(0)) for key, cats in actual.items()}
    keys = sorted(k for k, cats in actual.items() if level == 1 or len(cats) >= 2)
    period, dept_id = rng.choice(keys)
    dept, label = departments[dept_id], _label(period)
    year, month, span = period
    first = dt.date(year, month, 1)
    end = dt.date(*month_after(year, month, span), 1)
    query = (
        "SELECT c.category, sum(c.amount) AS actual FROM expense_claims c JOIN employees e ON e.id = c.employee_id "
        f"JOIN departments d ON d.id = e.department_id WHERE d.name = {quoted(dept['name'])} AND c.status IN ('approved', 'paid') "
        f"AND c.expense_date >= DATE '{first}' AND c.expense_date < DATE '{end}' GROUP BY c.category ORDER BY c.category"
    )
    total = totals[period, dept_id]
    if level == 1:
        return Instance(
            prompt=(
                f"How much did the {dept['name']} department spend on expense claims in {label}? Count approved and "
                "paid claims by their expense date, attributed to the claimant's department."
            ),
            rubric_items=[stated("total", f"The answer gives {total}", "amount", total, 3)],
            # The total's breakdown by category is a fact of the same claims: never charged.
            claims={
                "amount": {"extract": "amount", "allow": [str(v) for v in actual[period, dept_id].values()]}
            },
            solution=[
                sql_step(
                    query.replace("c.category, sum", "sum").replace(
                        " GROUP BY c.category ORDER BY c.category", ""
                    )
                ),
                {
                    "answer": f"{dept['name']} spent {eur(total)} EUR on approved and paid expense claims in {label}."
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    cats = actual[period, dept_id]
    budget = {
        c: max(100, round(float(cats[c]) * rng.uniform(0.7, 1.4) / 50) * 50)
        if c in cats
        else rng.choice((0, 100, 250))
        for c in CATEGORIES
    }
    n = len(CATEGORIES) + 1  # the last category row; the Total row is n + 1
    rows = [["Category", f"{label} Budget", f"{label} Actual", "Variance", "Variance %"]]
    for r, c in enumerate(CATEGORIES, 2):
        rows.append([c, budget[c], None, f"=B{r}-C{r}", f'=IF(B{r}=0,"",D{r}/B{r})'])
    rows.append(
        [
            "Total",
            f"=SUM(B2:B{n})",
            f"=SUM(C2:C{n})",
            f"=B{n + 1}-C{n + 1}",
            f'=IF(B{n + 1}=0,"",D{n + 1}/B{n + 1})',
        ]
    )
    notes = [
        ["Notes"],
        [
            f"Actual: approved or paid expense claims of the {dept['name']} department (the claimant's department) with an expense date in {label}."
        ],
        [
            "Fill in column C of sheet Budget only (0 where there were no claims); columns D and E and the Total row are formulas."
        ],
    ]
    tag = f"{year}-{month:02d}" if span == 1 else f"{year}-Q{(month + 2) // 3}"
    path = f"finance/budget_{dept['code'].lower()}_{tag}.xlsx"
    sheet = {"path": path, "sheet": "Budget"}
    return Instance(
        prompt=(
            f'Please fill in the {label} actuals in /workspace/{path} (sheet Budget, column "{label} Actual") from the '
            "expense claims in the database, as described on the workbook's Notes sheet. Every category row needs a "
            "number (0 where there were no claims). Keep the formulas in the other columns and the Total row working."
        ),
        files={path: xlsx_bytes({"Budget": rows, "Notes": notes})},
        rubric_items=[
            item(
                f"actual-{c}",
                f"{label} Actual for {c} is {cats.get(c, Decimal(0))} (cell C{r})",
                "documents.cell_value",
                {**sheet, "cell": f"C{r}", "expected": float(cats.get(c, 0)), "tolerance": 0.01},
                2 if c in cats else 1,
                "actuals",
            )
            for r, c in enumerate(CATEGORIES, 2)
        ]
        + [
            item(
                "total",
                f"The Total row's actual is {total}, computed by its SUM formula",
                "labelled_total",
                {**sheet, "label": "Total", "column": "C", "expected": float(total)},
                3,
                "totals",
            ),
            item(
                "formulas-kept",
                "Penalty: the variance formulas (columns D and E) were overwritten",
                "formulas_kept",
                {**sheet, "columns": ["D", "E"], "first_row": 2, "last_row": n + 1},
                -4,
                "penalties",
                reason="A penalty: it holds until the agent replaces the formulas.",
            ),
            item(
                "budget-kept",
                "Penalty: the budget column was changed",
                "labelled_total",
                {**sheet, "label": "Total", "column": "B", "expected": sum(budget.values())},
                -3,
                "penalties",
                reason="A penalty: it holds until the agent edits the budget column.",
            ),
        ],
        solution=[
            {"tool": "office.read_sheet", "args": {"path": path, "sheet": "Notes"}},
            {"tool": "office.read_sheet", "args": {"path": path, "sheet": "Budget"}},
            sql_step(query),
            {
                "tool": "office.write_cells",
                "args": {
                    "path": path,
                    "sheet": "Budget",
                    "start_cell": "C2",
                    "rows": [[float(cats.get(c, 0))] for c in CATEGORIES],
                },
            },
            {"tool": "office.read_sheet", "args": {"path": path, "sheet": "Budget"}},
            {
                "answer": f"Filled the {label} actuals for {dept['name']} in {path}: {eur(total)} EUR in total; the formulas recalculate from them."
            },
        ],
        damage={"allow": [{"files": path}]},
        apps=["db", "office"],
        limits=LIMITS_L2,
    )
