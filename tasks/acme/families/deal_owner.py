"""Who owns a deal. Level 0: the owner's name; level 1: the owner's e-mail and how many open deals they carry."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, by_id, count_kind, full_name, sql_step, stated
from gym.families import Instance

TITLE = "Who owns a deal"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    stages = by_id(world, "pipeline_stages")
    deals = world["deals"].dicts()
    deal = rng.choice(deals)
    owner = people[deal["owner_id"]]
    query = (
        "SELECT d.id, d.title, e.first_name, e.last_name, e.email FROM deals d "
        f"JOIN employees e ON e.id = d.owner_id WHERE d.id = {deal['id']}"
    )
    if level == 0:
        return Instance(
            prompt=f"Who owns deal #{deal['id']}? Give the person's full name.",
            rubric_items=[
                stated("owner", f"The answer names {full_name(owner)}", "employee", full_name(owner))
            ],
            solution=[sql_step(query), {"answer": f"Deal #{deal['id']} is owned by {full_name(owner)}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    n = sum(1 for d in deals if d["owner_id"] == owner["id"] and not stages[d["stage_id"]]["is_closed"])
    return Instance(
        prompt=(
            f"I need to talk to whoever owns deal #{deal['id']}. What is their e-mail address, and how many "
            "open deals (not closed won or lost) do they own in total?"
        ),
        rubric_items=[
            stated("email", f"The answer gives {owner['email']}", "email", owner["email"]),
            stated("open", f"The answer says {n} open deals", "open_deals", n, 3),
        ],
        claims={"open_deals": count_kind("open deals?|deals? (?:are |still )?open")},
        solution=[
            sql_step(query),
            sql_step(
                "SELECT count(*) FROM deals d JOIN pipeline_stages s ON s.id = d.stage_id "
                f"WHERE d.owner_id = {owner['id']} AND NOT s.is_closed"
            ),
            {
                "answer": f"{full_name(owner)} ({owner['email']}) owns deal #{deal['id']} and {n} open deals in total."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
