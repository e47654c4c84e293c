"""A customer's profile. Level 0: its segment; level 1: its industry, and how many customers share it."""

from __future__ import annotations

import re

from families._common import LIMITS_L0, LIMITS_L1, answer, count_regex, no_spray, quoted, sql_step
from gym.families import Instance

TITLE = "A customer's segment and industry"
LEVELS = (0, 1)
SPLIT = "train"
SEGMENTS = ("enterprise", "mid-market", "smb")


def _industry(name: str) -> str:
    name = re.escape(name)
    return rf"(?i:industry\W{{0,12}}(is\W{{0,3}})?{name}\b|\b{name}\W{{0,3}}(industry|sector)|\b(in|is)\s+(the\s+)?{name}\b)"


def generate(world, rng, level: int) -> Instance:
    customers = world["customers"].dicts()
    customer = rng.choice(customers)
    if level == 0:
        segment = customer["segment"]
        return Instance(
            prompt=f"Which customer segment is {customer['name']} in?",
            rubric_items=[
                answer("segment", f"The answer says {segment}", rf"(?i:(?<![\w-]){segment}(?![\w-]))"),
                no_spray(
                    [rf"(?i:(?<![\w-]){s}(?![\w-]))" for s in SEGMENTS if s != segment], "other segments"
                ),
            ],
            solution=[
                sql_step(f"SELECT name, segment FROM customers WHERE name = {quoted(customer['name'])}"),
                {"answer": f"{customer['name']} is in the {segment} segment."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    industry = customer["industry"]
    n = sum(1 for c in customers if c["industry"] == industry)
    industries = sorted({c["industry"] for c in customers} - {industry})
    counts = sorted({sum(1 for c in customers if c["industry"] == i) for i in industries} - {n})
    return Instance(
        prompt=f"What industry is {customer['name']} in, and how many of our customers (including it) are in that industry?",
        rubric_items=[
            # Labelled: a customer's name may hold its industry's word ("Pinecrest Insurance").
            answer("industry", f"The answer says {industry}", _industry(industry)),
            answer(
                "count", f"The answer says {n} customers", count_regex(n, "customers?|companies|of them"), 3
            ),
            no_spray(
                [_industry(i) for i in industries] + [count_regex(k, "customers?") for k in counts],
                "other industries",
            ),
        ],
        solution=[
            sql_step(f"SELECT industry FROM customers WHERE name = {quoted(customer['name'])}"),
            sql_step(
                "SELECT count(*) FROM customers WHERE industry = "
                f"(SELECT industry FROM customers WHERE name = {quoted(customer['name'])})"
            ),
            {"answer": f"{customer['name']} is in {industry}; {n} customers are in {industry}."},
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
