"""An expense claim. Level 0: its status; level 1: amount, category and receipt; level 2: review it by the receipt rule and record why."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, LIMITS_L2, by_id, full_name, sql_step, state, stated
from families._finance import expense_category_kind
from gym.families import Instance

TITLE = "Review an expense claim"
LEVELS = (0, 1, 2)
SPLIT = "train"
STATUSES = ["approved", "paid", "pending", "rejected"]
RECEIPT_LIMIT = 25  # the rule the prompt states: receipts are required above this amount (EUR)
# Whether a claim has a receipt, as people say it. A negation is the longer match ("no receipt
# attached", "doesn't have a receipt"), so it is never also read as a receipt.
_A = r"(?:(?:an?|the|its|any)\W+)?"
_IS = r"(?:(?:is|was)\W+)?"
RECEIPT = {
    "values": [
        {
            "value": "receipt",
            "regex": rf"\b(?:has|have|with|includes?|attached|there's|there\W+is)\W+{_A}receipts?\b"
            rf"|\breceipts?\W+{_IS}(?:attached|provided|on file|present|included|available)\b|\breceipts?\W{{0,3}}yes\b",
        },
        {
            "value": "no receipt",
            "regex": rf"\b(?:no|without|missing|lacks?|lacking)\W+{_A}receipts?\b(?:\W+(?:attached|provided|on file))?"
            rf"|(?:\bnot|n't)\W+(?:have|has|include|includes)\W+{_A}receipts?\b"
            rf"|\breceipts?\W+{_IS}(?:missing|not (?:attached|provided|on file|present|included|available))\b"
            r"|\breceipts?\W{0,3}no\b",
        },
    ]
}


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    claims = world["expense_claims"].dicts()
    query = "SELECT id, employee_id, category, description, amount, has_receipt, status FROM expense_claims WHERE id = {id}"
    if level == 0:
        claim = rng.choice(claims)
        return Instance(
            prompt=f"What is the status of expense claim {claim['id']}?",
            rubric_items=[stated("status", f"The answer says {claim['status']}", "status", claim["status"])],
            claims={"status": {"values": STATUSES}},
            solution=[
                sql_step(query.format(id=claim["id"])),
                {"answer": f"Claim {claim['id']} is {claim['status']}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        claim = rng.choice(claims)
        receipt = "receipt" if claim["has_receipt"] else "no receipt"
        return Instance(
            prompt=f"Expense claim {claim['id']}: how much is it for, in which category, and is there a receipt for it?",
            rubric_items=[
                stated("amount", f"The answer gives {claim['amount']}", "amount", claim["amount"], 3),
                stated("category", f"The answer says {claim['category']}", "category", claim["category"], 1),
                stated("receipt", f"The answer says: {receipt}", "receipt", receipt, 1),
            ],
            claims={"category": expense_category_kind(world), "receipt": RECEIPT},
            solution=[
                sql_step(query.format(id=claim["id"])),
                {
                    "answer": f"Claim {claim['id']}: {claim['amount']} EUR, category {claim['category']}, "
                    + ("receipt attached." if claim["has_receipt"] else "no receipt.")
                },
            ],
            apps=["db"],
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
    decided = f"SELECT status FROM expense_claims WHERE id = {claim['id']}"
    return Instance(
        prompt=(
            f"Review {full_name(person)}'s pending expense claim {claim['id']}. Our rule: a claim over "
            f"{RECEIPT_LIMIT} EUR needs a receipt. Approve it if it complies, reject it if it does not; record "
            "yourself as the reviewer, today as the review date, and a short review note saying why. Change nothing else."
        ),
        sql=f"UPDATE expense_claims SET has_receipt = {str(has_receipt).lower()}, amount = {amount} WHERE id = {claim['id']};\n",
        rubric_items=[
            # The decision is a claim: the wrong one is charged, so a blind guess earns nothing.
            stated(
                "status", f"Claim {claim['id']} is {status}", "decision", status, 4, where=f"sql:{decided}"
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
        claims={"decision": {"values": STATUSES, "allow": ["pending"]}},
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
        apps=["db"],
        limits=LIMITS_L2,
    )
