"""Held out of training: a customer's country and segment (level 0 asks for the country only)."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "A customer's country"
LEVELS = (0, 1)
SPLIT = "test"


def generate(world, rng, level: int) -> Instance:
    customer = rng.choice(world["customers"].dicts())
    country, segment = customer["country"], customer["segment"]
    query = f"SELECT name, country, segment FROM customers WHERE name = {quoted(customer['name'])}"
    # The world's country kind matches codes in capitals only: "it" and "in" are words, IT and IN countries.
    items = [stated("country", f"The answer gives the country code {country}", "country", country)]
    if level == 0:
        return Instance(
            prompt=f"Which country is our customer {customer['name']} in? Give the two-letter country code.",
            rubric_items=items,
            solution=[sql_step(query), {"answer": f"{customer['name']} is in {country}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    return Instance(
        prompt=f"Which country is {customer['name']} in (two-letter code), and which segment are they in?",
        rubric_items=[
            *items,
            stated("segment", f"The answer gives the segment {segment}", "segment", segment),
        ],
        solution=[sql_step(query), {"answer": f"{customer['name']}: country {country}, segment {segment}."}],
        apps=["db"],
        limits=LIMITS_L1,
    )
