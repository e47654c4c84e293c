"""A customer asks for a price by e-mail. Level 0: reply in the thread with the total for the seats asked."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from families._common import LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A price quote asked by e-mail"
LEVELS = (0,)
SPLIT = "train"
PRICE_LIST = "Standard 2025 H1"
AGENT = "jordan.lee@acme-analytics.com"
DOMAIN = "acme-analytics.com"


def _price_list(world) -> dict[str, Decimal]:
    list_id = next(p["id"] for p in world["price_lists"].dicts() if p["name"] == PRICE_LIST)
    names = {p["id"]: p["name"] for p in world["products"].dicts()}
    return {
        names[i["product_id"]]: Decimal(str(i["unit_price"]))
        for i in world["price_list_items"].dicts()
        if i["price_list_id"] == list_id
    }


def generate(world, rng, level: int) -> Instance:
    prices = _price_list(world)
    product = rng.choice(sorted(prices))
    quantity = rng.choice([3, 5, 8, 12, 20, 25, 40])
    total = prices[product] * quantity
    customers = {c["id"]: c for c in world["customers"].dicts()}
    contact = rng.choice(
        sorted((c for c in world["contacts"].dicts() if c["is_primary"]), key=lambda c: c["id"])
    )
    customer = customers[contact["customer_id"]]
    colleague = rng.choice(sorted(world["employees"].dicts(), key=lambda e: e["id"]))
    mail = {
        "domains": [DOMAIN],
        "accounts": [
            {"address": AGENT, "name": "Jordan Lee", "agent": True},
            {"address": colleague["email"], "name": f"{colleague['first_name']} {colleague['last_name']}"},
        ],
        "messages": [
            {
                "account": AGENT,
                "from": contact["email"],
                "to": [AGENT],
                "subject": f"Price for {quantity} x {product}?",
                "date": dt.datetime(2025, 4, 7, 8, 40, tzinfo=dt.UTC),
                "seen": False,
                "body": f"Hello Jordan,\n\nwhat would {quantity} units of {product} cost us at your current list "
                f"price ({PRICE_LIST})? A total in EUR is all we need for now.\n\nThanks,\n{contact['name']}\n"
                f"{customer['name']}",
            },
            {
                "account": AGENT,
                "from": colleague["email"],
                "to": [AGENT],
                "subject": "Team lunch on Thursday",
                "date": dt.datetime(2025, 4, 4, 12, 5, tzinfo=dt.UTC),
                "body": "Anyone up for the Italian place on Thursday? 12:30.",
            },
        ],
    }
    query = (
        "SELECT p.name, i.unit_price FROM price_list_items i JOIN price_lists pl ON pl.id = i.price_list_id "
        f"JOIN products p ON p.id = i.product_id WHERE pl.name = {quoted(PRICE_LIST)} AND p.name = {quoted(product)}"
    )
    reply = f"Hello {contact['name'].split()[0]},\n\n{quantity} x {product} come to EUR {total:.2f} on {PRICE_LIST}.\n\nBest,\nJordan"
    return Instance(
        prompt="A customer e-mailed me a price question this morning. Please answer them by e-mail.",
        rubric_items=[
            stated(
                "total",
                f"The reply to {contact['email']} gives the total, {total:.2f} EUR",
                "amount",
                total,
                3,
                where=f"mail:{contact['email']}",
            )
        ],
        solution=[
            {"tool": "mail.read_message", "args": {"message": "INBOX/1"}},
            sql_step(query),
            {"tool": "mail.reply", "args": {"message": "INBOX/1", "body": reply}},
            {"answer": f"I replied to {contact['name']}: {quantity} x {product} come to EUR {total:.2f}."},
        ],
        apps=["db", "mail"],
        mail=mail,
        limits=LIMITS_L1,
        damage={"allow": [{"mail": AGENT, "may": ["change"]}]},  # filing the request away is fine
    )
