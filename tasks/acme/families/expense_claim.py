"""An expense claim. Level 0: its status; level 1: amount, category and receipt; level 2: review it by the receipt rule and record why."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    by_id,
    full_name,
    money_regex,
    no_spray,
    sql_step,
    state,
    text_regex,
    unprompted,
)
from gym.families import Instance

TITLE = "Review an expense claim"
LEVELS = (0, 1, 2)
SPLIT = "train"
STATUSES = ("paid", "pending", "rejected", "approved")
RECEIPT_LIMIT = 25  # the rule the prompt states: receipts are required above this amount (EUR)


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    claims = world["expense_claims"].dicts()
    query = "SELECT id, employee_id, category, description, amount, has_receipt, status FROM expense_claims WHERE id = {id}"
    if level == 0:
        claim = rng.choice(claims)
        return Instance(
            prompt=f"What is the status of expense claim {claim['id']}?",
            rubric_items=[
                answer("status", f"The answer says {claim['status']}", text_regex(claim["status"])),
                no_spray([text_regex(s) for s in STATUSES if s != claim["status"]], "other statuses"),
            ],
            solution=[
                sql_step(query.format(id=claim["id"])),
                {"answer": f"Claim {claim['id']} is {claim['status']}."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    if level == 1:
        claim = rng.choice(claims)
        receipt = r"(?i:\b(has|with|attached|yes)\b[^\n]{0,20}receipt|receipt[^\n]{0,20}\b(attached|yes|provided)\b)"
        no_receipt = r"(?i:\b(no|without|missing)\b[^\n]{0,20}receipt|receipt[^\n]{0,20}\b(missing|no)\b)"
        return Instance(
            prompt=f"Expense claim {claim['id']}: how much is it for, in which category, and does it have a receipt?",
            rubric_items=[
                answer("amount", f"The answer gives {claim['amount']}", money_regex(claim["amount"]), 3),
                answer("category", f"The answer says {claim['category']}", text_regex(claim["category"]), 1),
                answer(
                    "receipt",
                    "The answer says whether there is a receipt",
                    receipt if claim["has_receipt"] else no_receipt,
                    1,
                ),
                no_spray(
                    unprompted(
                        sorted({money_regex(c["amount"]) for c in claims if c["amount"] != claim["amount"]}),
                        f"Expense claim {claim['id']}",
                    )
                    + [no_receipt if claim["has_receipt"] else receipt],
                    "other claims' amounts or the wrong receipt status",
                ),
            ],
            solution=[
                sql_step(query.format(id=claim["id"])),
                {
                    "answer": f"Claim {claim['id']}: {claim['amount']} EUR, {claim['category']}, "
                    + ("receipt attached." if claim["has_receipt"] else "no receipt.")
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    # Level 2: pending claims are made decidable by the overlay (receipt flag and amount set from the seed).
    claim = rng.choice([c for c in claims if c["status"] == "pending"])
    has_receipt = rng.random() < 0.5
    amount = claim["amount"] if claim["amount"] > RECEIPT_LIMIT else claim["amount"] + 100
    approve = has_receipt
    status = "approved" if approve else "rejected"
    person = people[claim["employee_id"]]
    reviewer = next(p for p in people.values() if p["chat_username"] == "jordan.lee")
    return Instance(
        prompt=(
            f"Review {full_name(person)}'s pending expense claim {claim['id']}. Our rule: a claim over "
            f"{RECEIPT_LIMIT} EUR needs a receipt. Approve it if it complies, reject it if it does not; record "
            "yourself as the reviewer, today as the review date, and a short review note saying why. Change nothing else."
        ),
        sql=f"UPDATE expense_claims SET has_receipt = {str(has_receipt).lower()}, amount = {amount} WHERE id = {claim['id']};\n",
        rubric_items=[
            state(
                "status",
                f"Claim {claim['id']} is {status}",
                f"SELECT status FROM expense_claims WHERE id = {claim['id']}",
                status,
                4,
            ),
            state(
                "reviewer",
                "You are recorded as the reviewer",
                f"SELECT reviewed_by FROM expense_claims WHERE id = {claim['id']}",
                reviewer["id"],
                1,
            ),
            {
                "id": "note",
                "description": "The review note mentions the receipt",
                "points": 1,
                "kind": "python",
                "section": "database",
                "check": "sql.row_exists",
                "args": {
                    "query": f"SELECT 1 FROM expense_claims WHERE id = {claim['id']} AND review_note ILIKE '%receipt%'"
                },
            },
        ],
        solution=[
            sql_step(query.format(id=claim["id"])),
            sql_step("SELECT id FROM employees WHERE chat_username = 'jordan.lee'"),
            {
                "tool": "db.execute",
                "args": {
                    "sql": f"UPDATE expense_claims SET status = '{status}', reviewed_by = {reviewer['id']}, reviewed_on = current_date, "
                    + (
                        "review_note = 'Receipt attached; within policy.'"
                        if approve
                        else f"review_note = 'Missing receipt for a claim over {RECEIPT_LIMIT} EUR.'"
                    )
                    + f" WHERE id = {claim['id']}"
                },
            },
            {"answer": f"Claim {claim['id']} is {status}."},
        ],
        damage={
            "allow": [
                {
                    "table": "expense_claims",
                    "columns": ["status", "reviewed_by", "reviewed_on", "review_note"],
                    "at_most": 1,
                }
            ]
        },
        apps=["postgres"],
        limits=LIMITS_L2,
    )
