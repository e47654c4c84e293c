"""Revenue by customer. Level 0: the total a named customer has paid; level 1: the top three customers by invoiced amount in a quarter (optionally within a segment, country or industry)."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, by_id, quoted, sql_step, stated
from families._finance import BILLED, eur, slug
from gym.families import Instance

TITLE = "Revenue by customer"
LEVELS = (0, 1)
SPLIT = "test"
COUNTRIES = {
    "AT": "Austria",
    "BE": "Belgium",
    "CH": "Switzerland",
    "DE": "Germany",
    "DK": "Denmark",
    "ES": "Spain",
    "FR": "France",
    "GB": "the United Kingdom",
    "GR": "Greece",
    "IE": "Ireland",
    "IT": "Italy",
    "NL": "the Netherlands",
    "PL": "Poland",
    "PT": "Portugal",
    "SE": "Sweden",
}


def _scope(column: str | None, value: str | None) -> tuple[str, str]:
    """How the prompt names the group of customers, and its SQL condition."""
    if column is None:
        return "", ""
    words = {
        "segment": f" in the {value} segment",
        "country": f" in {COUNTRIES.get(value, value)} (country {value})",
        "industry": f" in the {value} industry",
    }[column]
    return words, f" AND c.{column} = {quoted(value)}"


def generate(world, rng, level: int) -> Instance:
    customers = by_id(world, "customers")
    invoices = by_id(world, "invoices")
    if level == 0:
        paid: dict[int, Decimal] = defaultdict(Decimal)
        for p in world["payments"].dicts():
            paid[invoices[p["invoice_id"]]["customer_id"]] += p["amount"]
        customer = customers[rng.choice(sorted(paid))]
        value = paid[customer["id"]]
        return Instance(
            prompt=f"How much has {customer['name']} paid us in total (the sum of all payments received on its invoices), in EUR?",
            rubric_items=[stated("paid", f"The answer gives {value}", "amount", value, 3)],
            solution=[
                sql_step(
                    "SELECT sum(p.amount) AS paid FROM payments p JOIN invoices i ON i.id = p.invoice_id "
                    f"JOIN customers c ON c.id = i.customer_id WHERE c.name = {quoted(customer['name'])}"
                ),
                {"answer": f"{customer['name']} has paid {eur(value)} EUR in total."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    totals: dict[tuple[int, int], dict[int, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for i in invoices.values():
        if i["status"] in BILLED:
            totals[i["issue_date"].year, (i["issue_date"].month - 1) // 3 + 1][i["customer_id"]] += i["total"]
    options = []  # (quarter, column, value) whose top three are clear (no tie with the fourth)
    for quarter, amounts in sorted(totals.items()):
        if len(amounts) < 10:
            continue  # a stray invoice of the next quarter, not a quarter's business
        groups = [(None, None)] + sorted(
            {(col, c[col]) for c in customers.values() for col in ("segment", "country", "industry")}
        )
        for column, value in groups:
            ranked = sorted(
                (a for c, a in amounts.items() if column is None or customers[c][column] == value),
                reverse=True,
            )
            if (
                len(ranked) >= 3
                and len(set(ranked[:3])) == 3
                and (len(ranked) == 3 or ranked[2] != ranked[3])
            ):
                options.append((quarter, column, value))
    (year, q), column, value = rng.choice(options)
    words, condition = _scope(column, value)
    amounts = {c: a for c, a in totals[year, q].items() if column is None or customers[c][column] == value}
    top = sorted(amounts, key=lambda c: -amounts[c])[:3]
    names = [customers[c]["name"] for c in top]
    first, last = f"{year}-{3 * q - 2:02d}-01", f"{year + (q == 4)}-{(3 * q) % 12 + 1:02d}-01"
    return Instance(
        prompt=(
            f"Which three customers{words} were invoiced the most in Q{q} {year} (by invoice issue date; draft and "
            "void invoices don't count)? Rank them and give each one's invoiced total in EUR."
        ),
        # Each total counts next to its customer's name only; a customer outside the top three is a wrong one.
        rubric_items=[
            item
            for n, c in zip(names, top, strict=True)
            for item in (
                stated(f"name-{slug(n)}", f"The answer names {n}", "customer", n, 1),
                stated(f"top-{slug(n)}", f"{n}: {amounts[c]}", "amount", amounts[c], about=n),
            )
        ],
        solution=[
            sql_step(
                "SELECT c.name, sum(i.total) AS invoiced FROM invoices i JOIN customers c ON c.id = i.customer_id "
                f"WHERE i.status NOT IN ('draft', 'void') AND i.issue_date >= DATE '{first}' AND i.issue_date < DATE '{last}'"
                f"{condition} GROUP BY c.name ORDER BY invoiced DESC LIMIT 4"
            ),
            {
                "answer": f"Top customers{words} by invoiced amount in Q{q} {year}:\n"
                + "\n".join(
                    f"{k}. {n}: {eur(amounts[c])} EUR"
                    for k, (n, c) in enumerate(zip(names, top, strict=True), 1)
                )
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
