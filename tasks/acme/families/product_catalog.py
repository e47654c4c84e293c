"""The product catalogue. Level 0: a product's SKU; level 1: its category and unit, and whether it is still sold."""

from __future__ import annotations

import re

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A product in the catalogue"
LEVELS = (0, 1)
SPLIT = "test"  # held out: never trained on
SOLD = {
    "values": [
        {
            "value": "still sold",
            "regex": r"\b(?:still (?:sold|active|available|offered|orderable|be ordered)|is active|(?:can|may) (?:still )?be ordered)\b",
        },
        {
            "value": "no longer sold",
            "regex": r"\b(?:no longer|not)\s+(?:be\s+)?(?:sold|active|available|offered|orderable|ordered)\b"
            r"|\b(?:inactive|discontinued|retired)\b|\b(?:can ?not|can't)\s+(?:be\s+)?order(?:ed)?\b",
        },
    ]
}

# A category as people write it: "a service", "licence".
CATEGORY = {
    "license": r"\blicen[cs]es?\b",
    "services": r"\bservices?\b",
    "support": r"\bsupport\b",
    "training": r"\btrainings?\b",
}


def _unit(unit: str) -> dict[str, str]:
    """A unit as a label gives it ("per seat/year", "unit: day"): bare, "day" and "year" are any answer's words."""
    word = re.escape(unit)
    return {
        "value": unit,
        "regex": rf"\bper\W{{0,3}}{word}(?![\w/])|\bunit\W{{0,12}}(?:is\W{{0,3}})?{word}(?![\w/])",
    }


def generate(world, rng, level: int) -> Instance:
    products = world["products"].dicts()
    query = "SELECT sku, name, category, unit, active FROM products WHERE name = {name}"
    if level == 0:
        product = rng.choice(products)
        return Instance(
            prompt=f"What is the SKU of {product['name']}?",
            rubric_items=[stated("sku", f"The answer gives {product['sku']}", "sku", product["sku"])],
            solution=[
                sql_step(query.format(name=quoted(product["name"]))),
                {"answer": f"The SKU of {product['name']} is {product['sku']}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    # Not a product whose name says its category ("Premium Support"): repeating the question would answer it.
    product = rng.choice([p for p in products if p["category"].casefold() not in p["name"].casefold()])
    sold = "still sold" if product["active"] else "no longer sold"
    return Instance(
        prompt=(
            f"For {product['name']}: what category is it in, what unit is it sold per, and can customers "
            "still order it?"
        ),
        rubric_items=[
            stated("category", f"The answer says {product['category']}", "category", product["category"]),
            stated("unit", f"The answer says per {product['unit']}", "unit", product["unit"], 1),
            stated("active", f"The answer says it is {sold}", "sold", sold),
        ],
        claims={
            "category": {
                "values": [
                    {"value": c, "regex": CATEGORY[c]} for c in sorted({p["category"] for p in products})
                ]
            },
            "unit": {"values": [_unit(u) for u in sorted({p["unit"] for p in products})]},
            "sold": SOLD,
        },
        solution=[
            sql_step(query.format(name=quoted(product["name"]))),
            {
                "answer": f"{product['name']}: category {product['category']}, sold per {product['unit']}, {sold}."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
