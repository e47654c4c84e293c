"""The unit price of a product. Level 0: one list; level 1: how much it changed from 2024."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
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
    if level == 0:
        price = now[product]
        return Instance(
            prompt=f"What is the unit price of {product} on the {CURRENT} price list? Answer with the price in EUR.",
            rubric_items=[stated("price", f"The answer gives {price} EUR", "amount", price)],
            solution=[
                sql_step(query),
                {"answer": f"{product} costs {price} EUR on the {CURRENT} price list."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    change = now[product] - before[product]
    # "-12.50" is not read as an amount (a minus joins ids like CC-100): the answer says which way.
    direction = (
        "an increase of" if change > 0 else "a decrease of" if change < 0 else "unchanged, a difference of"
    )
    return Instance(
        prompt=(
            f"By how much did the unit price of {product} change from the {PREVIOUS} price list to "
            f"{CURRENT}? Give both prices and the difference in EUR."
        ),
        rubric_items=[
            stated(
                "old",
                f"The answer gives the {PREVIOUS} price {before[product]}",
                "amount",
                before[product],
                1,
            ),
            stated("new", f"The answer gives the {CURRENT} price {now[product]}", "amount", now[product], 1),
            stated("change", f"The answer gives the difference {abs(change)}", "amount", abs(change), 3),
        ],
        solution=[
            sql_step(query),
            {
                "answer": f"{product}: {before[product]} EUR in {PREVIOUS}, {now[product]} EUR in {CURRENT}, "
                f"{direction} {abs(change)} EUR."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
