"""Won business in a month. Level 0: one rep's won amount; level 1: the month's top rep; level 2: the per-rep summary posted in #sales."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    MONTHS,
    answer,
    by_id,
    count_regex,
    full_name,
    money_regex,
    no_spray,
    post_step,
    posted,
    sql_step,
    text_regex,
)
from gym.families import Instance

TITLE = "Deals won in a month"
LEVELS = (0, 1, 2)
SPLIT = "train"
WON = 6  # pipeline_stages.id of Closed Won


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    won: dict[tuple[int, int], dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for d in world["deals"].dicts():
        if d["stage_id"] == WON and d["closed_on"]:
            won[d["closed_on"].year, d["closed_on"].month][d["owner_id"]].append(d)
    months = sorted(m for m, reps in won.items() if len(reps) >= 2)
    year, month = rng.choice(months)
    reps = won[year, month]
    label = f"{MONTHS[month - 1]} {year}"
    first = f"{year}-{month:02d}-01"
    query = (
        "SELECT e.first_name || ' ' || e.last_name AS rep, count(*) AS deals, sum(d.amount) AS won FROM deals d "
        "JOIN employees e ON e.id = d.owner_id JOIN pipeline_stages s ON s.id = d.stage_id "
        f"WHERE s.name = 'Closed Won' AND d.closed_on >= DATE '{first}' AND d.closed_on < DATE '{first}' + interval '1 month' "
        "GROUP BY 1 ORDER BY won DESC"
    )
    amounts = {rep: sum((d["amount"] for d in ds), Decimal(0)) for rep, ds in reps.items()}
    if level == 0:
        rep = rng.choice(sorted(reps))
        value = amounts[rep]
        return Instance(
            prompt=f"How much did {full_name(people[rep])} win (deals closed won) in {label}, in EUR?",
            rubric_items=[
                answer("won", f"The answer gives {value}", money_regex(value), 3),
                # Other reps' totals and their single deals: a lone deal's amount is also a raw database value.
                no_spray(
                    sorted(
                        {money_regex(v) for v in amounts.values() if v != value}
                        | {money_regex(d["amount"]) for r, ds in reps.items() if r != rep for d in ds}
                        - {money_regex(value)}
                    ),
                    "other reps' amounts",
                ),
            ],
            solution=[sql_step(query), {"answer": f"{full_name(people[rep])} won {value} EUR in {label}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    ranked = sorted(amounts, key=lambda r: (-amounts[r], r))
    top = ranked[0]
    if level == 1:
        return Instance(
            prompt=f"Who won the most (deals closed won, by amount) in {label}, how many deals, and how much in EUR?",
            rubric_items=[
                answer(
                    "rep", f"The answer names {full_name(people[top])}", text_regex(full_name(people[top]))
                ),
                answer(
                    "deals",
                    f"The answer says {len(reps[top])} deals",
                    count_regex(len(reps[top]), "deals?"),
                    1,
                ),
                answer("won", f"The answer gives {amounts[top]}", money_regex(amounts[top]), 2),
                no_spray([money_regex(amounts[r]) for r in ranked[1:]], "other reps' amounts"),
            ],
            solution=[
                sql_step(query),
                {
                    "answer": f"{full_name(people[top])}: {len(reps[top])} deals, {amounts[top]} EUR in {label}."
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    total = sum(amounts.values(), Decimal(0))
    return Instance(
        prompt=(
            f"Post {label}'s won-deals summary in #sales: one line per sales rep with their number of deals and "
            "won amount in EUR, largest first, and the month's total."
        ),
        rubric_items=[
            posted(
                f"rep-{r}",
                f"{full_name(people[r])}: {len(reps[r])} deals, {amounts[r]}",
                "sales",
                [text_regex(full_name(people[r])), money_regex(amounts[r])],
                1,
            )
            for r in ranked
        ]
        + [posted("total", f"The month's total {total}", "sales", [money_regex(total)], 2)],
        solution=[
            sql_step(query),
            post_step(
                "sales",
                f"Won deals, {label}:\n"
                + "\n".join(
                    f"- {full_name(people[r])}: {len(reps[r])} deals, {amounts[r]} EUR" for r in ranked
                )
                + f"\nTotal: {total} EUR",
            ),
            {"answer": f"Posted {label}'s summary in #sales."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
