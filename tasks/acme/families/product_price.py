"""The unit price of a product. Level 0: one list; level 1: how much it changed from 2024."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, answer, money_regex, no_spray, quoted, sql_step
from gym.families import Instance

TITLE = "The unit price of a product"
LEVELS = (0, 1)
SPLIT = "train"
CURRENT, PREVIOUS = "Standard 2025 H1", "Standard 2024"


def _prices(world, list_name: str) -> dict[str, object]:
    list_id = next(p["id"] for p in world["price_lists"].dicts() if p["name"] == list_name)
    names = {p["id"]: p["name"] for p in world["products"].dicts()}
    return {
        names[i["product_id"]]: i["unit_price"]
        for i in world["price_list_items"].dicts()
        if i["price_list_id"] == list_id
    }


def generate(world, rng, level: int) -> Instance:
    now, before = _prices(world, CURRENT), _prices(world, PREVIOUS)
    product = rng.choice(sorted(now.keys() & before.keys()))
    query = (
        "SELECT pl.name AS price_list, i.unit_price FROM price_list_items i "
        "JOIN price_lists pl ON pl.id = i.price_list_id JOIN products p ON p.id = i.product_id "
        f"WHERE p.name = {quoted(product)}"
    )
    others = [money_regex(v) for name, v in now.items() if name != product and v != now[product]]
    if level == 0:
        price = now[product]
        return Instance(
            prompt=f"What is the unit price of {product} on the {CURRENT} price list? Answer with the price in EUR.",
            rubric_items=[
                answer("price", f"The answer gives {price} EUR", money_regex(price)),
                no_spray(others, "prices of other products"),
            ],
            solution=[
                sql_step(query),
                {"answer": f"{product} costs {price} EUR on the {CURRENT} price list."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    change = now[product] - before[product]
    return Instance(
        prompt=(
            f"By how much did the unit price of {product} change from the {PREVIOUS} price list to "
            f"{CURRENT}? Give both prices and the difference in EUR."
        ),
        rubric_items=[
            answer(
                "old",
                f"The answer gives the {PREVIOUS} price {before[product]}",
                money_regex(before[product]),
                1,
            ),
            answer(
                "new", f"The answer gives the {CURRENT} price {now[product]}", money_regex(now[product]), 1
            ),
            answer("change", f"The answer gives the difference {abs(change)}", money_regex(abs(change)), 3),
            no_spray(others, "prices of other products"),
        ],
        solution=[
            sql_step(query),
            {
                "answer": f"{product}: {before[product]} EUR in {PREVIOUS}, {now[product]} EUR in {CURRENT}, a change of {change:+} EUR."
            },
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
