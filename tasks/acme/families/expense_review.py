"""Expense claims by the written policy (policies/expense_policy.docx). Level 0: a claim's status; level 1: decide one new claim; level 2: decide all of one employee's pending claims and tell them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    dm,
    dm_step,
    execute_step,
    full_name,
    item,
    quoted,
    sql_step,
    stated,
)
from families._people import AGENT, TODAY, active, iso, me, people
from gym.families import Instance

TITLE = "Review expense claims by the policy"
LEVELS = (0, 1, 2)
SPLIT = "train"
STATUSES = ("pending", "approved", "rejected", "paid")
# A review decision recorded in expense_claims: an undecided claim stays pending, which costs nothing;
# a wrong decision costs what a right one earns.
DECISION = {"values": ["pending", "approved", "rejected"], "allow": ["pending"]}
# The outcome as told by direct message, rejected in its usual words.
OUTCOME = {
    "values": [
        "approved",
        {"value": "rejected", "regex": r"\b(rejected|declined|denied|refused|not (been )?approved)\b"},
    ]
}
POLICY = "policies/expense_policy.docx"
CITIES = (
    "Hamburg",
    "Munich",
    "Paris",
    "Amsterdam",
    "Vienna",
    "Zurich",
    "Madrid",
    "Dublin",
    "Copenhagen",
    "Milan",
)
GEAR = ("USB-C docking station", "Noise-cancelling headset", "Ergonomic keyboard", "Webcam for client calls")
BIG_GEAR = ("27-inch monitor for home office", "Tablet for customer demos", "Standing desk frame")
TOOLS = ("diagram editor", "screen recorder", "PDF editor", "password manager")
# kind: (approve?, policy section)
KINDS = {
    "train": (True, "3.1"),
    "taxi-small": (True, "2.2"),
    "no-receipt": (False, "2.2"),
    "late": (False, "2.1"),
    "meal": (True, "3.3"),
    "meal-over": (False, "3.3"),
    "wine": (False, "3.4"),
    "hotel": (True, "3.2"),
    "hotel-over": (False, "3.2"),
    "gear": (True, "3.7"),
    "gear-over": (False, "3.7"),
    "tool": (True, "3.5"),
    "tool-over": (False, "3.5"),
}
LIMITS = {"max_turns": 20, "time_limit_s": 600}


def _cents(rng, low: float, high: float) -> Decimal:
    return Decimal(rng.randint(int(low * 100), int(high * 100))) / 100


def _claim(rng, kind: str, client: str) -> dict:
    """A pending claim that only the rule of `kind` decides (every other rule is met; amounts stay under 1,000)."""
    city, n = rng.choice(CITIES), rng.randint(2, 5)
    nights = rng.randint(1, 3)
    hotel = f"Hotel {city}, {nights} night{'s' if nights > 1 else ''}"
    category, text, amount = {
        "train": ("travel", f"Train Berlin-{city} return, client visit {client}", _cents(rng, 60, 300)),
        "late": ("travel", f"Train Berlin-{city} return, client visit {client}", _cents(rng, 60, 300)),
        "taxi-small": ("travel", "Taxi to the station", _cents(rng, 8, 25)),
        "no-receipt": ("travel", f"Taxi to a meeting at {client}", _cents(rng, 26, 90)),
        "meal": ("meals", f"Client lunch with {client} ({n} people)", _cents(rng, 25 * n, 58 * n)),
        "meal-over": ("meals", f"Client dinner with {client} ({n} people)", _cents(rng, 63 * n, 80 * n)),
        "wine": (
            "meals",
            f"Dinner with {client} ({n} people), incl. a bottle of wine",
            _cents(rng, 30 * n, 55 * n),
        ),
        "hotel": ("lodging", hotel, _cents(rng, 110 * nights, 195 * nights)),
        "hotel-over": ("lodging", hotel, _cents(rng, 215 * nights, 260 * nights)),
        "gear": ("equipment", rng.choice(GEAR), _cents(rng, 60, 480)),
        "gear-over": ("equipment", rng.choice(BIG_GEAR), _cents(rng, 520, 950)),
        "tool": ("software", f"Annual {rng.choice(TOOLS)} subscription", _cents(rng, 10, 99)),
        "tool-over": ("software", f"Annual {rng.choice(TOOLS)} licence, team edition", _cents(rng, 120, 400)),
    }[kind]
    submitted = TODAY - dt.timedelta(days=rng.randint(1, 6))
    spent = submitted - dt.timedelta(days=rng.randint(61, 120) if kind == "late" else rng.randint(1, 30))
    approve, section = KINDS[kind]
    return {
        "category": category,
        "description": text,
        "amount": amount,
        "has_receipt": kind != "no-receipt" and kind != "taxi-small",
        "submitted_on": submitted,
        "expense_date": spent,
        "approve": approve,
        "section": section,
    }


def _insert(claims: list[dict], person) -> str:
    values = ", ".join(
        f"({c['id']}, {person['id']}, '{iso(c['submitted_on'])}', '{iso(c['expense_date'])}', '{c['category']}', "
        f"{quoted(c['description'])}, {c['amount']}, {str(c['has_receipt']).lower()}, 'pending')"
        for c in claims
    )
    return (
        "INSERT INTO expense_claims (id, employee_id, submitted_on, expense_date, category, description, amount, "
        f"has_receipt, status) VALUES {values};\n"
    )


def _decide(c: dict, reviewer: int) -> str:
    status = "approved" if c["approve"] else "rejected"
    note = f"{'Approved: within policy' if c['approve'] else 'Rejected: against policy'} ({c['section']})"
    return (
        f"UPDATE expense_claims SET status = '{status}', reviewed_by = {reviewer}, reviewed_on = current_date, "
        f"review_note = '{note}' WHERE id = {c['id']}"
    )


def _items(c: dict, reviewer: int, points: int) -> list[dict]:
    """The decision, and the reviewer and note, which earn nothing on a wrongly decided claim."""
    status = "approved" if c["approve"] else "rejected"
    where = f"FROM expense_claims WHERE id = {c['id']}"
    note = (
        f"review_note ~ '(^|[^0-9.]){c['section'].replace('.', '[.]')}([^0-9]|$)'"
        if not c["approve"]
        else "coalesce(review_note, '') <> ''"
    )
    why = f"cites section {c['section']}" if not c["approve"] else "is written"
    return [
        stated(
            f"status-{c['id']}",
            f"Claim {c['id']} is {status}",
            "decision",
            status,
            points,
            where=f"sql:SELECT status {where}",
        ),
        item(
            f"reviewer-{c['id']}",
            f"Claim {c['id']} records you as reviewer",
            "sql.row_exists",
            {"query": f"SELECT 1 {where} AND reviewed_by = {reviewer} AND status = '{status}'"},
            1,
            "database",
        ),
        item(
            f"note-{c['id']}",
            f"Claim {c['id']}'s review note {why}",
            "sql.row_exists",
            {"query": f"SELECT 1 {where} AND {note} AND status = '{status}'"},
            1,
            "database",
        ),
    ]


def generate(world, rng, level: int) -> Instance:
    claims, staff = world["expense_claims"].dicts(), people(world)
    if level == 0:
        seen: dict[tuple, int] = {}
        for c in claims:
            key = (c["employee_id"], c["submitted_on"], c["category"])
            seen[key] = seen.get(key, 0) + 1
        claim = rng.choice(
            [c for c in claims if seen[c["employee_id"], c["submitted_on"], c["category"]] == 1]
        )
        name, status = full_name(staff[claim["employee_id"]]), claim["status"]
        return Instance(
            prompt=(
                f"What is the status of {name}'s {claim['category']} expense claim of {claim['amount']} EUR, "
                f"submitted on {iso(claim['submitted_on'])}? Answer with the status as recorded."
            ),
            rubric_items=[stated("status", f"The answer says {status}", "claim_status", status)],
            claims={"claim_status": {"values": list(STATUSES)}},
            solution=[
                sql_step(
                    "SELECT c.id, c.amount, c.status FROM expense_claims c JOIN employees e ON e.id = c.employee_id "
                    f"WHERE e.id = {claim['employee_id']} AND c.submitted_on = DATE '{iso(claim['submitted_on'])}'"
                ),
                {"answer": f"It is {status}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    reviewer = me(world)["id"]
    next_id = max(c["id"] for c in claims) + 1
    clients = sorted(c["name"] for c in world["customers"].dicts())
    pending = {c["employee_id"] for c in claims if c["status"] == "pending"}
    if level == 1:
        person = rng.choice([p for p in active(world) if p["chat_username"] != AGENT])
        claim = _claim(rng, rng.choice(sorted(KINDS)), rng.choice(clients)) | {"id": next_id}
        return Instance(
            prompt=(
                f"Please review expense claim {claim['id']} ({full_name(person)}: {claim['description']}, "
                f"{claim['amount']} EUR) against our expense policy in /workspace/{POLICY}. Approve or reject it, "
                "record yourself as the reviewer, and write a review note giving the reason with the policy section."
            ),
            sql=_insert([claim], person),
            rubric_items=_items(claim, reviewer, 4),
            claims={"decision": DECISION},
            solution=[
                {"tool": "office.read_document", "args": {"path": POLICY}},
                sql_step(f"SELECT * FROM expense_claims WHERE id = {claim['id']}"),
                execute_step(_decide(claim, reviewer)),
                {
                    "answer": f"Claim {claim['id']} is {'approved' if claim['approve'] else 'rejected'} ({claim['section']})."
                },
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
            apps=["db", "office"],
            limits=LIMITS_L1,
        )
    person = rng.choice([p for p in active(world) if p["chat_username"] != AGENT and p["id"] not in pending])
    yes, no = sorted(k for k, v in KINDS.items() if v[0]), sorted(k for k, v in KINDS.items() if not v[0])
    kinds = [rng.choice(yes), rng.choice(no), rng.choice(sorted(KINDS))]
    mine = [_claim(rng, k, rng.choice(clients)) | {"id": next_id + i} for i, k in enumerate(kinds)]
    mine.sort(key=lambda c: (c["submitted_on"], c["description"]))
    for i, c in enumerate(mine):
        c["id"] = next_id + i
    first = person["first_name"]
    seeded = sorted(c["id"] for c in claims if c["status"] == "pending")
    return Instance(
        prompt=(
            f"{full_name(person)} has several expense claims waiting for review. Review all of their pending claims "
            f"against the expense policy in /workspace/{POLICY}: approve or reject each one, record yourself as the "
            f"reviewer with a review note giving the reason and the policy section, then tell {first} the outcome "
            "of each claim by direct message."
        ),
        sql=_insert(mine, person),
        # The outcome of each claim in the DM counts next to the claim's id.
        rubric_items=[i for c in mine for i in _items(c, reviewer, 3)]
        + [
            stated(
                f"told-{c['id']}",
                f"{first} is told that claim {c['id']} is {'approved' if c['approve'] else 'rejected'}",
                "outcome",
                "approved" if c["approve"] else "rejected",
                1,
                where=dm(person["chat_username"]),
                about=str(c["id"]),
            )
            for c in mine
        ]
        + [
            item(
                "others-untouched",
                "Penalty: other employees' pending claims were decided",
                "sql.value_equals",
                {
                    "query": f"SELECT count(*) FROM expense_claims WHERE status <> 'pending' AND id IN "
                    f"({', '.join(map(str, seeded))})",
                    "expected": 0,
                },
                -3,
                "database",
                reason="A penalty: it holds until the agent decides someone else's claim.",
            ),
        ],
        solution=[
            {"tool": "office.read_document", "args": {"path": POLICY}},
            sql_step(
                f"SELECT * FROM expense_claims WHERE employee_id = {person['id']} AND status = 'pending'"
            ),
            *[execute_step(_decide(c, reviewer)) for c in mine],
            dm_step(
                person["chat_username"],
                f"Hi {first}, I reviewed your expense claims:\n"
                + "\n".join(
                    f"- Claim {c['id']}: "
                    + (
                        "approved"
                        if c["approve"]
                        else f"rejected under section {c['section']} of the expense policy"
                    )
                    + f" ({c['description']}, {c['amount']} EUR)"
                    for c in mine
                ),
            ),
            {"answer": "; ".join(f"{c['id']}: {'approved' if c['approve'] else 'rejected'}" for c in mine)},
        ],
        claims={"decision": DECISION, "outcome": OUTCOME},
        damage={
            "allow": [
                {
                    "table": "expense_claims",
                    "columns": ["status", "reviewed_by", "reviewed_on", "review_note"],
                    "at_most": len(mine),
                }
            ]
        },
        apps=["db", "chat", "office"],
        limits=LIMITS,
    )
