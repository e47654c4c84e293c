"""A customer's profile. Level 0: its segment; level 1: its industry, and how many customers share it."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, count_kind, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A customer's segment and industry"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    customers = world["customers"].dicts()
    if level == 0:
        customer = rng.choice(customers)
        segment = customer["segment"]
        return Instance(
            prompt=f"Which customer segment is {customer['name']} in?",
            rubric_items=[stated("segment", f"The answer says {segment}", "segment", segment)],
            solution=[
                sql_step(f"SELECT name, segment FROM customers WHERE name = {quoted(customer['name'])}"),
                {"answer": f"{customer['name']} is in the {segment} segment."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    # Not a customer whose name says its industry ("Helios Energy"): repeating the question would answer it.
    customer = rng.choice([c for c in customers if c["industry"].casefold() not in c["name"].casefold()])
    industry = customer["industry"]
    n = sum(1 for c in customers if c["industry"] == industry)
    return Instance(
        prompt=f"What industry is {customer['name']} in, and how many of our customers (including it) are in that industry?",
        rubric_items=[
            stated("industry", f"The answer says {industry}", "industry", industry),
            stated("count", f"The answer says {n} customers", "customers", n, 3),
        ],
        claims={
            "industry": {"values": sorted({c["industry"] for c in customers})},
            "customers": count_kind("customers?|compan(?:y|ies)"),
        },
        solution=[
            sql_step(f"SELECT industry FROM customers WHERE name = {quoted(customer['name'])}"),
            sql_step(
                "SELECT count(*) FROM customers WHERE industry = "
                f"(SELECT industry FROM customers WHERE name = {quoted(customer['name'])})"
            ),
            {"answer": f"{customer['name']} is in {industry}; {n} customers are in {industry}."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
