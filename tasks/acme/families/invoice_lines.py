"""What was billed. Level 0: how many lines an invoice has; level 1: its biggest line (product and amount)."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, by_id, count_kind, quoted, sql_step, stated
from gym.families import Instance

TITLE = "The lines of an invoice"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    products = by_id(world, "products")
    lines: dict[int, list[dict]] = {}
    for line in world["invoice_lines"].dicts():
        lines.setdefault(line["invoice_id"], []).append(line)
    invoices = by_id(world, "invoices")
    if level == 0:
        invoice = invoices[rng.choice(sorted(lines))]
        n = len(lines[invoice["id"]])
        return Instance(
            prompt=f"How many lines does invoice {invoice['number']} have?",
            rubric_items=[stated("count", f"The answer says {n} lines", "lines", n)],
            claims={"lines": count_kind("lines?|items?|positions?")},
            solution=[
                sql_step(
                    "SELECT count(*) AS lines FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id "
                    f"WHERE i.number = {quoted(invoice['number'])}"
                ),
                {"answer": f"Invoice {invoice['number']} has {n} lines."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    # Only invoices whose biggest line is unambiguous.
    clear = [
        i
        for i, ls in lines.items()
        if len(ls) > 1
        and sorted(row["line_total"] for row in ls)[-1] != sorted(row["line_total"] for row in ls)[-2]
    ]
    invoice = invoices[rng.choice(sorted(clear))]
    top = max(lines[invoice["id"]], key=lambda row: row["line_total"])
    product = products[top["product_id"]]["name"]
    return Instance(
        prompt=f"Which product is the biggest line on invoice {invoice['number']}, and what is that line's total?",
        rubric_items=[
            stated("product", f"The answer names {product}", "product", product),
            stated("amount", f"The answer gives {top['line_total']}", "amount", top["line_total"], 3),
        ],
        # The line's quantity and unit price explain its total: facts of the line, never charged.
        claims={"amount": {"extract": "amount", "allow": [str(top["quantity"]), str(top["unit_price"])]}},
        solution=[
            sql_step(
                "SELECT p.name, l.quantity, l.unit_price, l.line_total FROM invoice_lines l "
                "JOIN invoices i ON i.id = l.invoice_id JOIN products p ON p.id = l.product_id "
                f"WHERE i.number = {quoted(invoice['number'])} ORDER BY l.line_total DESC"
            ),
            {"answer": f"The biggest line on {invoice['number']} is {product}, {top['line_total']} EUR."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
