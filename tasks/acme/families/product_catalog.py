"""The product catalogue. Level 0: a product's SKU; level 1: its category and unit, and whether it is still sold."""

from __future__ import annotations

import re

from families._common import LIMITS_L0, LIMITS_L1, answer, no_spray, quoted, sql_step, text_regex
from gym.families import Instance

TITLE = "A product in the catalogue"
LEVELS = (0, 1)
SPLIT = "test"  # held out: never trained on


def _category(name: str) -> str:
    return rf"(?i:categor\w*\W{{0,12}}(is\W{{0,3}})?{name}\b|\b{name}\W{{0,3}}categor)"


def _unit(unit: str) -> str:
    unit = re.escape(unit)
    return rf"(?i:\bper\W{{0,3}}{unit}(?![\w/])|\bunit\W{{0,12}}(is\W{{0,3}})?{unit}(?![\w/]))"


def generate(world, rng, level: int) -> Instance:
    products = world["products"].dicts()
    product = rng.choice(products)
    query = f"SELECT sku, name, category, unit, active FROM products WHERE name = {quoted(product['name'])}"
    if level == 0:
        return Instance(
            prompt=f"What is the SKU of {product['name']}?",
            rubric_items=[
                answer("sku", f"The answer gives {product['sku']}", text_regex(product["sku"])),
                no_spray([text_regex(p["sku"]) for p in products if p["id"] != product["id"]], "other SKUs"),
            ],
            solution=[sql_step(query), {"answer": f"The SKU of {product['name']} is {product['sku']}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    sold = "still sold" if product["active"] else "no longer sold"
    categories = sorted({p["category"] for p in products} - {product["category"]})
    return Instance(
        prompt=(
            f"For {product['name']}: what category is it in, what unit is it sold per, and can customers "
            "still order it?"
        ),
        rubric_items=[
            # Labelled: a product's name may hold its category's word ("Administrator Training").
            answer("category", f"The answer says {product['category']}", _category(product["category"])),
            answer("unit", f"The answer says per {product['unit']}", _unit(product["unit"]), 1),
            answer(
                "active",
                f"The answer says it is {sold}",
                r"(?i:\b(still (sold|active|available|offered)|is active)\b)"
                if product["active"]
                else r"(?i:\b(not|no longer|inactive|discontinued)\b)",
            ),
            no_spray(
                [_category(c) for c in categories]
                + [
                    r"(?i:\b(not|no longer|inactive|discontinued)\b)"
                    if product["active"]
                    else r"(?i:\bstill (sold|active)\b)"
                ],
                "other categories or the opposite status",
            ),
        ],
        solution=[
            sql_step(query),
            {
                "answer": f"{product['name']}: category {product['category']}, sold per {product['unit']}, {sold}."
            },
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
