"""Where a deal stands. Level 0: its pipeline stage; level 1: a customer's open pipeline; level 2: move a deal and tell #sales."""

from __future__ import annotations

from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    execute_step,
    post_step,
    quoted,
    sql_step,
    state,
    stated,
)
from gym.families import Instance

TITLE = "Where a deal stands in the pipeline"
LEVELS = (0, 1, 2)
SPLIT = "train"
OPEN_STAGES = ("Lead", "Qualified", "Demo", "Proposal", "Negotiation")


def generate(world, rng, level: int) -> Instance:
    stages = by_id(world, "pipeline_stages")
    customers = by_id(world, "customers")
    deals = world["deals"].dicts()
    if level == 0:
        deal = rng.choice(deals)
        stage = stages[deal["stage_id"]]["name"]
        return Instance(
            prompt=f"Which pipeline stage is deal #{deal['id']} in?",
            rubric_items=[stated("stage", f"The answer says {stage}", "stage", stage)],
            solution=[
                sql_step(
                    f"SELECT d.title, s.name AS stage FROM deals d JOIN pipeline_stages s ON s.id = d.stage_id WHERE d.id = {deal['id']}"
                ),
                {"answer": f"Deal #{deal['id']} is in {stage}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    open_by_customer: dict[int, list[dict]] = {}
    for deal in deals:
        if stages[deal["stage_id"]]["name"] in OPEN_STAGES:
            open_by_customer.setdefault(deal["customer_id"], []).append(deal)
    if level == 1:
        customer = customers[rng.choice(sorted(open_by_customer))]
        mine = open_by_customer[customer["id"]]
        total = sum((d["amount"] for d in mine), Decimal(0))
        return Instance(
            prompt=(
                f"How many open deals (not Closed Won or Closed Lost) does {customer['name']} have, "
                "and what is their total amount in EUR?"
            ),
            rubric_items=[
                stated("count", f"The answer says {len(mine)} open deals", "open_deals", len(mine)),
                stated("total", f"The answer gives the total {total}", "amount", total, 3),
            ],
            claims={"open_deals": count_kind("deals?")},
            solution=[
                sql_step(
                    "SELECT count(*) AS open_deals, sum(d.amount) AS total FROM deals d "
                    "JOIN pipeline_stages s ON s.id = d.stage_id JOIN customers c ON c.id = d.customer_id "
                    f"WHERE NOT s.is_closed AND c.name = {quoted(customer['name'])}"
                ),
                {"answer": f"{customer['name']} has {len(mine)} open deals worth {total} EUR in total."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    movable = [
        d for ds in open_by_customer.values() for d in ds if stages[d["stage_id"]]["name"] != "Negotiation"
    ]
    deal = rng.choice(movable)
    before = stages[deal["stage_id"]]
    target = next(s for s in stages.values() if s["position"] == before["position"] + 1)
    customer = customers[deal["customer_id"]]
    return Instance(
        prompt=(
            f"Deal #{deal['id']} ({deal['title']}) has moved one stage forward. Update it in the database "
            f"(stage only), then post a one-line update in #sales naming the customer, the new stage and the amount."
        ),
        rubric_items=[
            state(
                "stage",
                f"Deal #{deal['id']} is in {target['name']}",
                f"SELECT stage_id FROM deals WHERE id = {deal['id']}",
                target["id"],
            ),
            # The customer is in the deal's title, so the prompt already names it: no item for it.
            stated(
                "announced-stage",
                f"#sales hears the new stage {target['name']}",
                "stage",
                target["name"],
                2,
                where="#sales",
            ),
            stated(
                "announced-amount",
                f"#sales hears the amount {deal['amount']}",
                "amount",
                deal["amount"],
                2,
                where="#sales",
            ),
        ],
        # "Moved from Demo to Proposal" names the stage it left: a fact, never charged.
        claims={"stage": {"values": sorted(s["name"] for s in stages.values()), "allow": [before["name"]]}},
        solution=[
            sql_step(
                f"SELECT d.id, d.stage_id, s.position FROM deals d JOIN pipeline_stages s ON s.id = d.stage_id WHERE d.id = {deal['id']}"
            ),
            execute_step(f"UPDATE deals SET stage_id = {target['id']} WHERE id = {deal['id']}"),
            post_step(
                "sales",
                f"Deal #{deal['id']} with {customer['name']} moved to {target['name']} ({deal['amount']} EUR).",
            ),
            {"answer": f"Deal #{deal['id']} is now in {target['name']}; #sales is informed."},
        ],
        sql="GRANT UPDATE (stage_id) ON deals TO agent;\n",  # sales ops may move deals in this instance
        damage={"allow": [{"table": "deals", "columns": ["stage_id"], "at_most": 1}]},
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
