"""Change a list price, and only it. Level 0: a new price given; level 1: a percentage rise, rounded to the cent."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from families._common import LIMITS_L0, LIMITS_L1, by_id, execute_step, quoted, sql_step, state
from gym.families import Instance

TITLE = "Update a list price"
LEVELS = (0, 1)
SPLIT = "train"
CURRENT = "Standard 2025 H1"


def generate(world, rng, level: int) -> Instance:
    products = by_id(world, "products")
    lists = {p["name"]: p for p in world["price_lists"].dicts()}
    current = lists[CURRENT]
    items = [i for i in world["price_list_items"].dicts() if i["price_list_id"] == current["id"]]
    item = rng.choice(items)
    product = products[item["product_id"]]
    if level == 0:
        new = (item["unit_price"] + rng.choice([-50, 25, 40, 100, 250])).quantize(Decimal("0.01"))
        prompt = f"Set the unit price of {product['name']} on the {CURRENT} price list to {new} EUR."
    else:
        percent = rng.choice([3, 5, 8, 10, 12])
        new = (item["unit_price"] * (100 + percent) / 100).quantize(Decimal("0.01"), ROUND_HALF_UP)
        prompt = (
            f"Raise the unit price of {product['name']} on the {CURRENT} price list by {percent} %, rounded to "
            "the cent. Leave every other price alone."
        )
    where = f"price_list_id = {current['id']} AND product_id = {product['id']}"
    return Instance(
        prompt=prompt,
        rubric_items=[
            state(
                "price",
                f"{product['name']} costs {new}",
                f"SELECT unit_price FROM price_list_items WHERE {where}",
                str(new),
                4,
            )
        ],
        solution=[
            sql_step(
                "SELECT i.price_list_id, i.product_id, i.unit_price FROM price_list_items i JOIN products p ON p.id = i.product_id "
                f"JOIN price_lists pl ON pl.id = i.price_list_id WHERE p.name = {quoted(product['name'])} AND pl.name = {quoted(CURRENT)}"
            ),
            execute_step(f"UPDATE price_list_items SET unit_price = {new} WHERE {where}"),
            {"answer": f"{product['name']} now costs {new} EUR on {CURRENT}."},
        ],
        damage={"allow": [{"table": "price_list_items", "columns": ["unit_price"], "at_most": 1}]},
        apps=["db"],
        limits=LIMITS_L0 if level == 0 else LIMITS_L1,
    )
