"""Posting in the right channel. Level 0: post a given announcement, word for word, in a named channel;
level 1: thank a named employee in their department's channel, mentioning their @username."""

from __future__ import annotations

import re

from families._common import LIMITS_L0, LIMITS_L1, by_id, full_name, post_step, sql_step, stated
from families._people import usernames
from families._support import AGENT, TEAM_CHANNELS
from gym.families import Instance

TITLE = "Post a message in the right channel"
LEVELS = (0, 1)
SPLIT = "train"
MINE = ("general", "random", "finance", "sales", "support", "ops")  # the channels the agent is in
REGIONS = {"ALL": "both offices", "DE": "the Berlin office", "UK": "the London office"}
NOTICES = (
    "The {city} kitchen is closed for cleaning on {weekday} from {hour}:00 to {end}:00.",
    "Fire drill in the {city} office on {weekday} at {hour}:30; please leave by the nearest exit.",
    "The {city} meeting room {room} is booked for interviews all day on {weekday}.",
    "Coffee machine on floor {floor} in {city} is being repaired on {weekday}; use floor {other} instead.",
    "Reminder: timesheets for this week are due {weekday} at {hour}:00.",
)
THANKS = (
    "covering the weekend on-call",
    "helping close the Q1 books on time",
    "running the customer workshop last week",
    "organising the team lunch",
    "the thorough handover notes",
    "jumping in on the Tessera escalation",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def generate(world, rng, level: int) -> Instance:
    if level == 0:
        if rng.random() < 0.4:
            h = rng.choice(world["holidays"].dicts())
            line = f"Reminder: {h['name']} on {h['day'].strftime('%A')} {h['day'].day} {h['day'].strftime('%B')} is a day off in {REGIONS[h['region']]}."
        else:
            hour = rng.randint(8, 15)
            line = rng.choice(NOTICES).format(
                city=rng.choice(["Berlin", "London"]),
                weekday=rng.choice(WEEKDAYS),
                hour=hour,
                end=hour + rng.randint(1, 3),
                room=rng.choice("ABCDEF") + str(rng.randint(1, 4)),
                floor=rng.randint(1, 3),
                other=rng.randint(4, 5),
            )
        channel = rng.choice(MINE)
        # A line of a post that is the announcement and nothing else (quotes or an emoji around it aside):
        # the prompt's line, which asks for it, is not one; posted in any other channel it is misplaced.
        words = r"\s+".join(re.escape(word) for word in line.split())
        return Instance(
            prompt=f'Post this announcement in #{channel}, exactly as written: "{line}"',
            rubric_items=[
                stated(
                    "posted",
                    f"#{channel} gets the announcement, word for word and nothing else",
                    "announcement",
                    line,
                    4,
                    where=f"#{channel}",
                )
            ],
            claims={
                "announcement": {"regex": rf"^\W{{0,3}}(?P<value>{words})\W{{0,3}}$", "case_sensitive": True}
            },
            solution=[post_step(channel, line), {"answer": f"Posted the announcement in #{channel}."}],
            apps=["chat"],
            limits=LIMITS_L0,
        )
    departments = by_id(world, "departments")
    staff = [
        p
        for p in world["employees"].dicts()
        if p["status"] == "active"
        and p["chat_username"] != AGENT
        and departments[p["department_id"]]["code"] in TEAM_CHANNELS
    ]
    person = rng.choice(staff)
    reason = rng.choice(THANKS)
    channel = TEAM_CHANNELS[departments[person["department_id"]]["code"]]
    steps = [
        sql_step(
            "SELECT e.first_name, e.last_name, e.chat_username, d.name AS department FROM employees e JOIN departments d "
            f"ON d.id = e.department_id WHERE e.first_name = '{person['first_name']}' AND e.last_name = '{person['last_name'].replace(chr(39), chr(39) * 2)}'"
        )
    ]
    if channel not in MINE:
        steps.append({"tool": "chat.add_channel_member", "args": {"channel": channel, "username": AGENT}})
    # The mention in another channel, or of someone else, is misplaced or wrong (grader.claims).
    return Instance(
        prompt=(
            f"Please thank {full_name(person)} publicly for {reason}: post a short thank-you in the chat channel of "
            "their department, mentioning them with their @username."
        ),
        rubric_items=[
            stated(
                "thanked",
                f"#{channel} gets a thank-you mentioning @{person['chat_username']}",
                "username",
                person["chat_username"],
                4,
                where=f"#{channel}",
            )
        ],
        claims={"username": usernames(world, mention=True)},
        solution=[
            *steps,
            post_step(channel, f"A big thank-you to @{person['chat_username']} for {reason}!"),
            {"answer": f"Thanked {full_name(person)} in #{channel}."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L1,
    )
