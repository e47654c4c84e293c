"""What someone claimed. Level 0: their total in one category; level 1: their biggest category and its total."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    answer,
    by_id,
    full_name,
    money_regex,
    no_spray,
    sql_step,
    text_regex,
)
from gym.families import Instance

TITLE = "Someone's expense claims by category"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    totals: dict[int, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for c in world["expense_claims"].dicts():
        totals[c["employee_id"]][c["category"]] += c["amount"]
    query = "SELECT category, sum(amount) AS total FROM expense_claims WHERE employee_id = {id} GROUP BY category ORDER BY total DESC"
    if level == 0:
        person = people[rng.choice(sorted(totals))]
        mine = totals[person["id"]]
        category = rng.choice(sorted(mine))
        value = mine[category]
        others = sorted({money_regex(v) for cats in totals.values() for v in cats.values() if v != value})
        return Instance(
            prompt=f"How much has {full_name(person)} (employee id {person['id']}) claimed in {category} expenses in total?",
            rubric_items=[
                answer("total", f"The answer gives {value}", money_regex(value), 3),
                no_spray(others, "other totals"),
            ],
            solution=[sql_step(query.format(id=person["id"])), {"answer": f"{value} EUR in {category}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    clear = [
        p
        for p, cats in totals.items()
        if len(cats) > 1 and sorted(cats.values())[-1] != sorted(cats.values())[-2]
    ]
    person = people[rng.choice(sorted(clear))]
    mine = totals[person["id"]]
    top = max(mine, key=mine.get)
    return Instance(
        prompt=f"In which expense category has {full_name(person)} (employee id {person['id']}) claimed the most, and how much in total?",
        rubric_items=[
            answer("category", f"The answer says {top}", text_regex(top)),
            answer("total", f"The answer gives {mine[top]}", money_regex(mine[top]), 3),
            no_spray([money_regex(v) for k, v in mine.items() if k != top], "their other categories' totals"),
        ],
        solution=[sql_step(query.format(id=person["id"])), {"answer": f"{top}: {mine[top]} EUR."}],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
