"""A change that waits for a manager's word in chat (coworkers who answer): ask, then act on the answer.

Level 0: a time-off request waits for the requester's manager, named in the prompt; ask them,
then record what they decide (they approve). Level 1: the prompt names only the requester: find
their manager in the database; the manager approves or declines (with a reason) and asks back
when the message does not say whose request it is. Recording a decision before the manager's
reply costs what the decision earns (`transcript.acted_after_reply`).
"""

from __future__ import annotations

import re

from families._common import (
    LIMITS_L1,
    conversations,
    dm_step,
    execute_step,
    full_name,
    item,
    quoted,
    sql_step,
    stated,
)
from families._people import AGENT, active, iso, people
from families.time_off_approval import DECISION, GRANT, KINDS, _free_span, _insert, _where
from gym.families import Instance

TITLE = "Ask the manager before the change"
LEVELS = (0, 1)
SPLIT = "train"
LIMITS = {"max_turns": 12, "time_limit_s": 420}
TOPIC = r"time.?off|leave|holiday|vacation|training|request|approv|days? off"
DECLINE_REASONS = (
    "that's our quarter-end close week",
    "two of the team are already out then",
    "we have the customer workshop that week",
)


def _read(username: str) -> dict:
    return {"tool": "chat.read_channel", "args": {"channel": f"@{username}", "limit": 5}}


def generate(world, rng, level: int) -> Instance:
    staff = people(world)
    person = rng.choice(
        [
            p
            for p in active(world)
            if p["chat_username"] != AGENT
            and p["manager_id"] in staff
            and staff[p["manager_id"]]["chat_username"] != AGENT
        ]
    )
    boss = staff[person["manager_id"]]
    own = [
        (r["start_date"], r["end_date"])
        for r in world["time_off"].dicts()
        if r["employee_id"] == person["id"]
    ]
    span = _free_span(rng, own)
    kind, name = rng.choice(KINDS), full_name(person)
    approve = level == 0 or rng.random() < 0.5
    decision = "approved" if approve else "declined"
    first = person["first_name"]
    said = (
        [f"Yes, approve {first}'s {kind}, thanks.", f"Fine by me, go ahead and approve it for {first}."]
        if approve
        else [
            f"Please decline it: {reason}. I'll talk to {first}." for reason in rng.sample(DECLINE_REASONS, 2)
        ]
    )
    coworkers = [
        {
            "username": boss["chat_username"],
            "rules": [
                {
                    # At level 1 the message must say whose request: managers have several people.
                    "asks": [TOPIC, *([r"\b" + re.escape(first)] if level else [])],
                    "replies": said,
                }
            ],
            "otherwise": ["Whose request do you mean?"] if level else ["Sorry, about what?"],
            "delay_calls": [1, 2] if level else [0, 1],
        }
    ]
    what = f"{name}'s {kind} request for {iso(span[0])} to {iso(span[1])}"
    row = f"SELECT status FROM time_off WHERE {_where(person, span[0])}"
    update = re.escape("time_off")  # any statement that writes the table counts as acting
    prompt = (
        f"{what} waits for {full_name(boss)}'s decision ({boss['chat_username']} in chat). Ask them, then "
        "record their decision in the time-off table. Don't decide before they answer."
        if level == 0
        else f"{name} asked for time off ({kind}, {iso(span[0])} to {iso(span[1])}). Their manager decides: "
        "ask them in chat, then record the decision in the time-off table. Don't decide before they answer."
    )
    lookup = sql_step(
        "SELECT m.first_name, m.last_name, m.chat_username FROM employees e JOIN employees m ON m.id = e.manager_id "
        f"WHERE e.first_name || ' ' || e.last_name = {quoted(name)}"
    )
    solution = [
        *([lookup] if level else []),
        dm_step(boss["chat_username"], f"Hi {boss['first_name']}, do you approve {what}?"),
        *[_read(boss["chat_username"])] * 3,
        execute_step(f"UPDATE time_off SET status = '{decision}' WHERE {_where(person, span[0])}"),
        {"answer": f"{full_name(boss)} {'approved' if approve else 'declined'} it; recorded as {decision}."},
    ]
    return Instance(
        prompt=prompt,
        sql=GRANT + _insert([(person, *span, kind, "requested")]),
        rubric_items=[
            stated(
                "decision",
                f"The request is recorded as {decision}",
                "decision",
                decision,
                4,
                where=f"sql:{row}",
            ),
            item(
                "waited",
                f"Penalty: the time-off table was written before {full_name(boss)} answered",
                "transcript.acted_after_reply",
                {"author": boss["chat_username"], "regex": rf"(update|insert|delete)\b[\s\S]*{update}"},
                -4,
                "conversation",
                reason="A penalty: it holds until the agent writes the table before the answer.",
            ),
        ],
        solution=solution,
        claims={"decision": DECISION},
        coworkers=coworkers,
        damage={
            "allow": [{"table": "time_off", "columns": ["status"], "at_most": 1}, *conversations(coworkers)]
        },
        apps=["db", "chat"],
        limits=LIMITS if level else LIMITS_L1,
    )
