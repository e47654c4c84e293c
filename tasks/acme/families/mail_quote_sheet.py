"""A quote spreadsheet mailed to a customer. A customer e-mails for a quote on several products; the
agent builds the quote in /workspace (one row per product: quantity, unit price, line total; a Total
row) and replies to the customer with the file attached and the total in the text.

Level 0: two products on the price list the customer names (Standard 2025 H1).
Level 1: three or four products at the prices agreed for this customer, which only an internal mail
from their account manager gives: the Partner 2025 list, or a volume discount on the standard list
for lines of enough units. A second such note, about another customer, is a distractor.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from families._common import LIMITS_L1, LIMITS_L2, by_id, full_name, item, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A quote spreadsheet mailed to a customer"
LEVELS = (0, 1)
SPLIT = "train"
AGENT = "jordan.lee@acme-analytics.com"
DOMAIN = "acme-analytics.com"
STANDARD, PARTNER = "Standard 2025 H1", "Partner 2025"
QUANTITIES = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50]
CENT = Decimal("0.01")


def _prices(world, name: str) -> dict[str, Decimal]:
    list_id = next(p["id"] for p in world["price_lists"].dicts() if p["name"] == name)
    products = by_id(world, "products")
    return {
        products[i["product_id"]]["name"]: Decimal(str(i["unit_price"]))
        for i in world["price_list_items"].dicts()
        if i["price_list_id"] == list_id and products[i["product_id"]]["active"]
    }


def _terms(rng) -> dict:
    """Special prices for a customer: the partner list, or a volume discount on the standard list."""
    if rng.random() < 0.5:
        return {"kind": "partner", "list": PARTNER}
    return {"kind": "volume", "list": STANDARD, "pct": rng.choice([10, 15]), "min": rng.choice([10, 20])}


def _note(terms: dict, customer: str, manager: dict) -> str:
    if terms["kind"] == "partner":
        rule = (
            f"{customer} signed our reseller partner agreement, so every quote for them now comes from the "
            f"{PARTNER} price list, not the standard one."
        )
    else:
        rule = (
            f"we agreed a volume discount with {customer}: {terms['pct']}% off the {STANDARD} unit price on every "
            f"line of {terms['min']} units or more, rounded to the cent. Smaller lines stay at list price."
        )
    return f"Hi Jordan,\n\nfor any quotes you send out: {rule}\n\nThanks,\n{manager['first_name']}"


def _quantities(rng, n: int, terms: dict | None) -> list[int]:
    """n quantities; under a volume discount at least one line above the threshold and one below."""
    while True:
        picked = [rng.choice(QUANTITIES) for _ in range(n)]
        if terms is None or terms["kind"] != "volume":
            return picked
        if any(q >= terms["min"] for q in picked) and any(q < terms["min"] for q in picked):
            return picked


def generate(world, rng, level: int) -> Instance:
    standard = _prices(world, STANDARD)
    customers = by_id(world, "customers")
    people = by_id(world, "employees")
    contacts = [c for c in world["contacts"].dicts() if c["is_primary"]]
    contacts = [c for c in contacts if customers[c["customer_id"]]["status"] == "active"]
    contact = rng.choice(sorted(contacts, key=lambda c: c["id"]))
    customer = customers[contact["customer_id"]]
    terms = _terms(rng) if level == 1 else None
    prices = _prices(world, terms["list"]) if terms else standard
    while True:
        products = rng.sample(sorted(standard), 2 if level == 0 else rng.choice([3, 4]))
        asked = dict(zip(products, _quantities(rng, len(products), terms), strict=True))  # the mail's order
        unit = {p: prices[p] for p in asked}
        if terms and terms["kind"] == "volume":
            off = (100 - terms["pct"]) / Decimal(100)
            unit |= {p: (prices[p] * off).quantize(CENT) for p, q in asked.items() if q >= terms["min"]}
        line = {p: unit[p] * q for p, q in asked.items()}
        total = sum(line.values(), Decimal(0))
        # A figure like 2040 in a cell reads as a year, not an amount (grader.claims.extract): none here.
        if not any(v == int(v) and 1900 <= v <= 2099 for v in [*unit.values(), *line.values(), total]):
            break
    slug = re.sub(r"[^a-z0-9]+", "-", customer["name"].lower()).strip("-")
    path = f"quote-{slug}.xlsx"
    sheet = f"file:{path}"
    first = contact["name"].split()[0]
    wanted = "\n".join(f"- {q} x {p}" for p, q in asked.items())
    on = f"on your {STANDARD} price list" if level == 0 else "at the prices you agreed with us"
    messages = [
        {
            "account": AGENT,
            "from": contact["email"],
            "to": [AGENT],
            "subject": f"Quote request: {customer['name']}",
            "date": dt.datetime(2025, 4, 7, 8, rng.randint(5, 50), tzinfo=dt.UTC),
            "seen": False,
            "body": f"Hello Jordan,\n\ncould you send us a quote, as a spreadsheet, {on} for:\n{wanted}\n\n"
            f"Thank you,\n{contact['name']}\n{customer['name']}",
        }
    ]
    if terms:
        other = rng.choice(
            sorted(i for i, c in customers.items() if c["status"] == "active" and c != customer)
        )
        decoy = _terms(rng)
        while decoy["kind"] == terms["kind"]:
            decoy = _terms(rng)
        notes = [(customer, terms, dt.datetime(2025, 3, 24, 15, 10, tzinfo=dt.UTC))]
        notes.append(
            (customers[other], decoy, dt.datetime(2025, 3, rng.choice([12, 28]), 9, 30, tzinfo=dt.UTC))
        )
        for who, rule, when in notes:
            am = people[who["account_manager_id"]]
            messages.append(
                {
                    "account": AGENT,
                    "from": am["email"],
                    "to": [AGENT],
                    "subject": f"Pricing for {who['name']}",
                    "date": when,
                    "body": _note(rule, who["name"], am),
                }
            )
    colleague = rng.choice(sorted(set(people) - {3, customer["account_manager_id"]}))
    messages.append(
        {
            "account": AGENT,
            "from": people[colleague]["email"],
            "to": [AGENT],
            "subject": "Team lunch on Thursday",
            "date": dt.datetime(2025, 4, 4, 12, 5, tzinfo=dt.UTC),
            "body": "Anyone up for the Italian place on Thursday? 12:30.",
        }
    )
    accounts = [{"address": AGENT, "name": "Jordan Lee", "agent": True}]
    senders = {m["from"] for m in messages} - {contact["email"]}
    accounts += [
        {"address": p["email"], "name": full_name(p)} for p in people.values() if p["email"] in senders
    ]
    n = len(products) + 1
    rows = [["Product", "Quantity", "Unit price", "Line total"]]
    rows += [[p, q, float(unit[p]), f"=B{r}*C{r}"] for r, (p, q) in enumerate(asked.items(), 2)]
    rows += [["Total", None, None, f"=SUM(D2:D{n})"]]
    names = ", ".join(quoted(p) for p in products)
    steps = [{"tool": "mail.read_message", "args": {"message": "INBOX/1"}}]
    steps += [{"tool": "mail.read_message", "args": {"message": "INBOX/2"}}] if terms else []
    body = (
        f"Hello {first},\n\nplease find attached our quote ({path}). The total comes to EUR {total:,.2f}.\n\n"
        "Best regards,\nJordan Lee\nAcme Analytics"
    )
    # The quote's figures, in the reply or on the sheet's Total row (checked as a cell), are never charged;
    # nor are list prices a discount starts from.
    shown = {*unit.values(), *line.values(), total, *((standard[p] for p in products) if terms else ())}
    return Instance(
        prompt=(
            f"A customer e-mailed me for a quote. Please build it with the office tools as /workspace/{path}: "
            "a header row (Product, Quantity, Unit price, Line total), then one row per product they asked for "
            "with its quantity, unit price and line total in EUR (columns A-D), then a row with Total in column A "
            "and the quote's total in column D. Then reply to their e-mail with the file attached and the total "
            "in the text."
            + (
                " Use the prices that apply to this customer: sales tell me about special terms by e-mail."
                if terms
                else ""
            )
        ),
        rubric_items=[
            # The sheet's rows are lines: a product's figures count next to its name only (grader.claims).
            *(
                stated(f"{what}-{i}", f"{p}: {what} {value}", "amount", value, 1, where=sheet, about=p)
                for i, (p, q) in enumerate(asked.items(), 1)
                for what, value in (("unit", unit[p]), ("line", line[p]))
            ),
            item(
                "total-row",
                f"The Total row gives {total} in column D",
                "labelled_total",
                {
                    "path": path,
                    "label": "Total",
                    "column": "D",
                    "expected": float(total),
                    "formula_regex": None,
                },
                2,
                "spreadsheet",
            ),
            item(
                "attached",
                f"The reply to {contact['email']} carries {path} as it is in /workspace",
                "mail.sent",
                {"to": contact["email"], "attachment_of": path},
                3,
                "mail",
            ),
            stated(
                "total",
                f"The reply gives the total, {total:.2f} EUR",
                "amount",
                total,
                2,
                where=f"mail:{contact['email']}",
            ),
            item(
                "nothing-outside",
                "Penalty: mail went to an outside address other than the customer's",
                "mail.nothing_sent_outside",
                {"allow": [contact["email"]]},
                -3,
                "mail",
                reason="A penalty: it holds until the agent mails someone outside the company.",
            ),
        ],
        claims={"amount": {"extract": "amount", "allow": [str(v) for v in sorted(shown)]}},
        solution=[
            *steps,
            sql_step(
                "SELECT p.name, i.unit_price FROM price_list_items i JOIN price_lists pl ON pl.id = i.price_list_id "
                f"JOIN products p ON p.id = i.product_id WHERE pl.name = {quoted(terms['list'] if terms else STANDARD)} "
                f"AND p.name IN ({names})"
            ),
            {"tool": "office.create_document", "args": {"path": path}},
            {"tool": "office.write_cells", "args": {"path": path, "start_cell": "A1", "rows": rows}},
            {"tool": "mail.reply", "args": {"message": "INBOX/1", "body": body, "attachments": [path]}},
            {"answer": f"I built {path} and mailed it to {contact['name']}: the total is EUR {total:,.2f}."},
        ],
        apps=["db", "mail", "office"],
        mail={"domains": [DOMAIN], "accounts": accounts, "messages": messages},
        limits=LIMITS_L1 if level == 0 else LIMITS_L2,
        damage={"allow": [{"mail": AGENT, "may": ["change"]}]},  # filing the request away is fine
    )
