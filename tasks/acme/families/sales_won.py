"""Won business in a month. Level 0: one rep's won amount; level 1: the month's top rep; level 2: the per-rep summary posted in #sales."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    MONTHS,
    by_id,
    count_kind,
    full_name,
    post_step,
    sql_step,
    stated,
)
from gym.families import Instance

TITLE = "Deals won in a month"
LEVELS = (0, 1, 2)
SPLIT = "train"
WON = 6  # pipeline_stages.id of Closed Won
DEALS = count_kind("deals?")


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
            rubric_items=[stated("won", f"The answer gives {value}", "amount", value, 3)],
            solution=[sql_step(query), {"answer": f"{full_name(people[rep])} won {value} EUR in {label}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    ranked = sorted(amounts, key=lambda r: (-amounts[r], r))
    top = ranked[0]
    if level == 1:
        name = full_name(people[top])
        return Instance(
            prompt=f"Who won the most (deals closed won, by amount) in {label}, how many deals, and how much in EUR?",
            rubric_items=[
                stated("rep", f"The answer names {name}", "employee", name),
                stated("deals", f"The answer says {len(reps[top])} deals", "deals", len(reps[top]), 1),
                stated("won", f"The answer gives {amounts[top]}", "amount", amounts[top], 2),
            ],
            claims={"deals": DEALS},
            solution=[
                sql_step(query),
                {"answer": f"{name}: {len(reps[top])} deals, {amounts[top]} EUR in {label}."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    total = sum(amounts.values(), Decimal(0))
    # One line per rep: each figure counts next to its rep's name only.
    items = [
        item
        for r in ranked
        for item in (
            stated(
                f"deals-{r}",
                f"{full_name(people[r])}: {len(reps[r])} deals",
                "deals",
                len(reps[r]),
                1,
                where="#sales",
                about=full_name(people[r]),
            ),
            stated(
                f"won-{r}",
                f"{full_name(people[r])}: {amounts[r]}",
                "amount",
                amounts[r],
                1,
                where="#sales",
                about=full_name(people[r]),
            ),
        )
    ]
    return Instance(
        prompt=(
            f"Post {label}'s won-deals summary in #sales: one line per sales rep with their number of deals and "
            "won amount in EUR, largest first, and the month's total."
        ),
        rubric_items=[
            *items,
            stated("total", f"The month's total {total}", "amount", total, 2, where="#sales"),
        ],
        # The month's deal count may go with its total: a fact, never charged.
        claims={"deals": DEALS | {"allow": [sum(len(ds) for ds in reps.values())]}},
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
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
