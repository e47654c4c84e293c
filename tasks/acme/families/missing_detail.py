"""A colleague's request that leaves out what only they know (coworkers who answer): ask, then do it right.

A sales or finance lead sent a direct message before the episode: put the price agreed in this
morning's pricing call into the price list, for "one of our support products" (or licences,
services, training products: one category of the catalogue, drawn per seed). Which product, and
the new price (drawn per seed: no table, document or post holds it), are only in their head.
Level 0: the request names the list and the prompt says what it leaves out: ask in chat, change
that one price, confirm it by DM. Level 1: the prompt only says "deal with <colleague>'s request";
the list is open too (Standard 2025 H1 or Partner 2025, so 6 to 12 candidate rows), and the
colleague answers what the message asks: the product and the list for "which one?", the price for
"how much?", both for both, and asks back when the message asks neither.

Graded: the right row holds the new price (4), the DM to the colleague states it (2), every other
price row is left as it was (-6 when any changes: what the right change and its confirmation earn
together), and writing the price list before the colleague's first reply costs 4
(`transcript.acted_after_reply`). Current and planned prices, ids and list years may be quoted
back (the amount kind `allow`s them). Guessing does not pay: with N candidates (3 to 6 at level
0, 6 to 12 at level 1), a random one after learning only the price earns 4/N + 2 - 6(N-1)/N, below
0 for N >= 3; changing every candidate earns 4 + 2 - 6 - (N-1) for the rows past the one allowed
(damage), below null's 0; acting before asking has no price to write and pays the -4 as well.
"""

from __future__ import annotations

import hashlib
from decimal import ROUND_HALF_UP, Decimal

from acmegen.catalog import H2_2025_PRICES

from families._common import (
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    conversations,
    dm,
    dm_step,
    execute_step,
    full_name,
    item,
    quoted,
    sql_step,
    stated,
)
from families._finance import eur
from families._people import post
from gym.families import Instance

TITLE = "Ask what the request leaves out"
LEVELS = (0, 1)
SPLIT = "train"
LISTS = ("Standard 2025 H1", "Partner 2025")  # the price lists in force
DECIDERS = ("VP Sales", "Sales Operations Manager", "Sales Manager EMEA", "Head of Finance")
NOUNS = {
    "license": "licences",
    "support": "support products",
    "services": "services",
    "training": "training products",
}
CHANGES = (-8, -5, 4, 6, 7, 9, 11, 13)  # per cent, then rounded to a price a pricing call agrees on
# What a follow-up question asks: which row (the product, the list), and what value (the price).
WHICH = (
    r"which|what (product|one|item|tier|plan|module|package|service|training|licen[cs]e|list)|mean|"
    r"product|tier|module|package|service|training|licen[cs]e|add-?on|list|sku|exactly|specif|clarif|detail"
)
VALUE = r"price|how much|amount|value|cost|figure|\beur\b|€|number|\brate\b"
WRITE = r"\b(update|insert\s+into|delete\s+from)\s+(\w+\.)?price_list_items"


def _read(username: str) -> dict:
    return {"tool": "chat.read_channel", "args": {"channel": f"@{username}", "limit": 5}}


def _amounts(world) -> set[Decimal]:
    """Every number the database holds but its ids, and the planned prices: a new price that is one of
    them could be read instead of asked."""
    out = {Decimal(v) for v in H2_2025_PRICES.values()}
    for table in world.tables.values():
        for row in table.dicts():
            out |= {
                Decimal(v)
                for k, v in row.items()
                if isinstance(v, int | Decimal)
                and not isinstance(v, bool)
                and k != "id"
                and not k.endswith("_id")
            }
    return out


def _new_price(rng, old: Decimal, taken: set[Decimal]) -> Decimal:
    step = Decimal(5) if old < 1000 else Decimal(10) if old < 5000 else Decimal(50)
    for change in rng.sample(CHANGES, len(CHANGES)):
        new = (old * (100 + change) / 100 / step).quantize(Decimal(1), ROUND_HALF_UP) * step
        if new != old and new not in taken:
            return new.quantize(Decimal("0.01"))
    raise ValueError(f"no new price for {old}")


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    products = by_id(world, "products")
    lists = {pl["name"]: pl for pl in world["price_lists"].dicts()}
    prices = {
        (i["price_list_id"], i["product_id"]): i["unit_price"] for i in world["price_list_items"].dicts()
    }
    asker = rng.choice(sorted((p for p in people.values() if p["title"] in DECIDERS), key=lambda p: p["id"]))
    category = rng.choice(sorted(NOUNS))
    open_lists = [lists[name] for name in (LISTS if level else LISTS[:1])]
    group = [
        p
        for p in sorted(products.values(), key=lambda p: p["id"])
        if p["category"] == category
        and p["active"]
        and all((pl["id"], p["id"]) in prices for pl in open_lists)
    ]
    product, price_list = rng.choice(group), rng.choice(open_lists)
    key = (price_list["id"], product["id"])
    old = prices[key]
    new = _new_price(rng, old, _amounts(world))
    first, user, noun = asker["first_name"], asker["chat_username"], NOUNS[category]
    where = f"price_list_id = {price_list['id']} AND product_id = {product['id']}"
    on_list = f"on the {price_list['name']} list"
    full = [
        f"Sorry! It's the {product['name']} {on_list}, new price {eur(new)} EUR.",
        f"The {product['name']}, {on_list}: {eur(new)} EUR from now on.",
    ]
    if level == 0:
        rules = [{"asks": [f"{WHICH}|{VALUE}"], "replies": full}]
        otherwise = ["Sorry, what do you need from me?"]
    else:
        rules = [
            {"asks": [WHICH, VALUE], "replies": full},
            {
                "asks": [WHICH],
                "replies": [
                    f"The {product['name']}, {on_list}.",
                    f"I meant the {product['name']} {on_list}.",
                ],
            },
            {"asks": [VALUE], "replies": [f"{eur(new)} EUR, as agreed.", f"It's {eur(new)} EUR now."]},
        ]
        otherwise = ["Sorry, which bit do you need: which one I meant, or the price?"]
    coworkers = [
        {
            "username": user,
            "rules": rules,
            "otherwise": otherwise,
            "delay_calls": [1, 2] if level else [0, 0],
        }
    ]
    request = (
        f"Hi Jordan, in this morning's pricing call we agreed a new price for one of our {noun}. "
        f"Could you put it into the {price_list['name']} price list, please?"
        if level == 0
        else f"Hi Jordan, could you update the price list with the new price for the {noun} we agreed in "
        "this morning's pricing call? Thanks!"
    )
    names = ", ".join(p["name"] for p in group)
    question = (
        f"Hi {first}, which of the {noun} do you mean ({names}), and what is the new price?"
        if level == 0
        else f"Hi {first}, which product do you mean ({names}), on which price list "
        f"({' or '.join(LISTS)}), and what is the new price?"
    )
    candidates = sql_step(
        "SELECT pl.name AS price_list, p.id, p.name, i.price_list_id, i.unit_price FROM price_list_items i "
        "JOIN products p ON p.id = i.product_id JOIN price_lists pl ON pl.id = i.price_list_id "
        f"WHERE p.category = {quoted(category)} AND pl.name IN ({', '.join(quoted(pl['name']) for pl in open_lists)}) "
        "ORDER BY pl.name, p.id"
    )
    solution = [
        *([_read(user)] if level else []),
        candidates,
        dm_step(user, question),
        *[_read(user)] * (3 if level else 1),
        execute_step(f"UPDATE price_list_items SET unit_price = {new} WHERE {where}"),
        dm_step(user, f"Done: the {product['name']} {on_list} is now {eur(new)} EUR (was {eur(old)})."),
        {
            "answer": f"{first} meant the {product['name']} {on_list}: its price is now {eur(new)} EUR, and I told them."
        },
    ]
    others = sorted((k, v) for k, v in prices.items() if k != key)
    fingerprint = ",".join(f"{pl}/{p}/{v}" for (pl, p), v in others)
    prompt = (
        f"{full_name(asker)} ({user} in chat) asked you by direct message to change a price, but the message "
        f"does not say which of the {noun} they mean or what the new price is. Ask them in chat, make the "
        "change in the database, and confirm it to them in the same chat."
        if level == 0
        else f"Please deal with {full_name(asker)}'s request in chat."
    )
    allowed = sorted({*prices.values(), *(Decimal(v) for v in H2_2025_PRICES.values())}) + [
        *range(1, len(products) + 1),
        2024,
        2025,
    ]
    return Instance(
        prompt=prompt,
        chat={"posts": [post(dm(user), user, request)]},
        rubric_items=[
            item(
                "price",
                f"The {product['name']} costs {eur(new)} {on_list}",
                "sql.value_equals",
                {"query": f"SELECT unit_price FROM price_list_items WHERE {where}", "expected": str(new)},
                4,
                "database",
            ),
            stated(
                "confirmed",
                f"The DM to {first} confirms the new price {eur(new)}",
                "amount",
                new,
                2,
                where=dm(user),
            ),
            item(
                "others-untouched",
                f"Penalty: a price other than the {product['name']}'s {on_list} was changed",
                "sql.value_equals",
                {
                    "query": "SELECT md5(string_agg(price_list_id || '/' || product_id || '/' || unit_price, ',' "
                    f"ORDER BY price_list_id, product_id)) FROM price_list_items WHERE NOT ({where})",
                    "expected": _md5(fingerprint),
                },
                -6,
                "database",
                reason="A penalty: it holds until the agent changes a price it was not asked to change.",
            ),
            item(
                "waited",
                f"Penalty: the price list was written before {full_name(asker)} answered",
                "transcript.acted_after_reply",
                {"author": user, "regex": WRITE},
                -4,
                "conversation",
                reason="A penalty: it holds until the agent writes the price list before the answer.",
            ),
        ],
        solution=solution,
        claims={"amount": {"extract": "amount", "allow": [str(v) for v in allowed]}},
        coworkers=coworkers,
        damage={
            "allow": [
                {"table": "price_list_items", "columns": ["unit_price"], "at_most": 1},
                *conversations(coworkers),
            ]
        },
        apps=["db", "chat"],
        limits=LIMITS_L2 if level else LIMITS_L1,
    )


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()  # what PostgreSQL's md5(text) gives for the same text
