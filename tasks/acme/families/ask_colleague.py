"""A fact that is in no system, only in a colleague's head: ask them in chat (coworkers who answer).

Level 0: the prompt names the account manager; ask them when a customer's renewal call was moved
to, and report the date. Level 1: the prompt names only the customer: find its account manager in
the database and ask them; a colleague from the same team guesses a wrong date, and the account
manager answers a little later and asks back when the message does not name the customer.
Asking every colleague costs more than the answer earns (`chat.people_messaged`). Having
asked the right person earns nothing by itself: anyone can send a message, only the reply
holds the date.
"""

from __future__ import annotations

import datetime as dt
import re

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    by_id,
    conversations,
    dm_step,
    full_name,
    quoted,
    sql_step,
    stated,
)
from gym.families import Instance

TITLE = "Ask the colleague who knows"
LEVELS = (0, 1)
SPLIT = "train"
AGENT = "jordan.lee"
TODAY = dt.date(2025, 4, 7)  # the world's date
TOPIC = r"renewal|call|meeting|moved|resched|date|when"


def _weekday_after(rng) -> dt.date:
    """A working day one to six weeks after the world's date."""
    day = TODAY + dt.timedelta(days=rng.randint(7, 40))
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def _spoken(day: dt.date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def _read(username: str) -> dict:
    return {"tool": "chat.read_channel", "args": {"channel": f"@{username}", "limit": 5}}


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    customers = sorted(
        (c for c in world["customers"].dicts() if c["account_manager_id"]), key=lambda c: c["id"]
    )
    customer = rng.choice(customers)
    manager = people[customer["account_manager_id"]]
    moved_to = _weekday_after(rng)
    first = manager["first_name"]
    coworkers = [
        {
            "username": manager["chat_username"],
            "rules": [
                {
                    # At level 1 they look after several accounts: a message must say which one.
                    "asks": [TOPIC, *([_name_pattern(customer["name"])] if level else [])],
                    "replies": [
                        f"We moved it to {_spoken(moved_to)}, same time.",
                        f"It's now on {_spoken(moved_to)}.",
                        f"{customer['name']} asked for {_spoken(moved_to)} instead, so that's when it is.",
                    ],
                }
            ],
            "otherwise": (
                ["Which customer do you mean? I have a few renewals coming up."]
                if level
                else ["Sorry, what do you need?"]
            ),
            "delay_calls": [1, 2] if level else [0, 0],
        }
    ]
    if level:
        guess = _weekday_after(rng)
        while guess == moved_to:
            guess = _weekday_after(rng)
        teammates = sorted(
            (
                p
                for p in people.values()
                if p["department_id"] == manager["department_id"]
                and p["id"] != manager["id"]
                and p["chat_username"] != AGENT
                and p["status"] == "active"
            ),
            key=lambda p: p["id"],
        )
        for mate in teammates[:3]:
            coworkers.append(
                {
                    "username": mate["chat_username"],
                    "rules": [
                        {
                            "asks": [TOPIC],
                            "replies": [
                                f"I think it went to {_spoken(guess)}? Not sure, {first} owns that account.",
                                f"Heard {_spoken(guess)}, but better ask {first}.",
                            ],
                        }
                    ],
                    "otherwise": [f"No idea, sorry. {first} would know."],
                    "delay_calls": [0, 1],
                }
            )
    question = f"Hi {first}, when was the {customer['name']} renewal call moved to?"
    reads = [_read(manager["chat_username"])] * (1 if level == 0 else 3)
    solution = [dm_step(manager["chat_username"], question), *reads]
    if level:
        solution.insert(
            0,
            sql_step(
                "SELECT e.first_name, e.last_name, e.chat_username FROM customers c "
                f"JOIN employees e ON e.id = c.account_manager_id WHERE c.name = {quoted(customer['name'])}"
            ),
        )
    solution.append(
        {"answer": f"The {customer['name']} renewal call is now on {_spoken(moved_to)} {moved_to.year}."}
    )
    prompt = (
        f"The renewal call with {customer['name']} was moved. {full_name(manager)} ({manager['chat_username']} "
        "in chat) knows the new date: please ask them and tell me."
        if level == 0
        else f"Our renewal call with {customer['name']} was moved, and it is not in any calendar I can see. "
        "Find out the new date from whoever manages that account, and tell me."
    )
    return Instance(
        prompt=prompt,
        rubric_items=[
            stated(
                "date", f"The answer gives the new date, {moved_to:%d %B %Y}", "date", moved_to.isoformat(), 3
            ),
            {
                "id": "not-everyone",
                "description": "Asked the person who knows, not everyone (at most two people messaged)",
                "points": -4,
                "kind": "python",
                "section": "conversation",
                "check": "chat.people_messaged",
                "args": {"user": AGENT, "at_most": 2},
                "baseline_ok": True,
                "baseline_reason": "a penalty: it passes until the agent messages everyone",
            },
        ],
        solution=solution,
        apps=["db", "chat"],
        coworkers=coworkers,
        damage={"allow": conversations(coworkers)},
        limits=LIMITS_L1 if level else LIMITS_L0,
    )


def _name_pattern(name: str) -> str:
    """The customer's name as a message may write it: its first word will do ("Globex")."""
    return r"\b" + re.escape(name.split()[0])
