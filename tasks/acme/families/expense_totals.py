"""What someone claimed. Level 0: their total in one category; level 1: their biggest category and its total."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import LIMITS_L0, LIMITS_L1, by_id, full_name, sql_step, stated
from families._finance import expense_category_kind
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
        return Instance(
            prompt=f"How much has {full_name(person)} (employee id {person['id']}) claimed in {category} expenses in total?",
            rubric_items=[stated("total", f"The answer gives {value}", "amount", value, 3)],
            solution=[sql_step(query.format(id=person["id"])), {"answer": f"{value} EUR in {category}."}],
            apps=["db"],
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
            stated("category", f"The answer says {top}", "category", top),
            stated("total", f"The answer gives {mine[top]}", "amount", mine[top], 3),
        ],
        claims={"category": expense_category_kind(world)},
        solution=[
            sql_step(query.format(id=person["id"])),
            {"answer": f"Their biggest category is {top}: {mine[top]} EUR."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
