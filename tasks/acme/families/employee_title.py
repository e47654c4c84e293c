"""Someone's job. Level 0: their title; level 1: office and start date; level 2: a work-anniversary note in #general."""

from __future__ import annotations

import datetime as dt

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    count_kind,
    full_name,
    post_step,
    quoted,
    sql_step,
    stated,
)
from families._people import OFFICE, usernames
from gym.families import Instance

TITLE = "Someone's job title, office and start date"
LEVELS = (0, 1, 2)
SPLIT = "train"


def _query(person) -> str:
    return (
        "SELECT first_name, last_name, title, location, hire_date, chat_username FROM employees "
        f"WHERE first_name = {quoted(person['first_name'])} AND last_name = {quoted(person['last_name'])}"
    )


def generate(world, rng, level: int) -> Instance:
    people = [p for p in world["employees"].dicts() if p["status"] == "active"]
    person = rng.choice(people)
    name = full_name(person)
    if level == 0:
        # "Backend Engineer" is no wrong title inside "Senior Backend Engineer": the longest name is read.
        return Instance(
            prompt=f"What is {name}'s job title?",
            rubric_items=[stated("title", f"The answer says {person['title']}", "title", person["title"])],
            solution=[sql_step(_query(person)), {"answer": f"{name} is {person['title']}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        return Instance(
            prompt=f"Which office does {name} work from, and when did they join the company?",
            rubric_items=[
                stated("office", f"The answer says {person['location']}", "office", person["location"]),
                stated("joined", f"The answer gives {person['hire_date']}", "date", person["hire_date"], 3),
            ],
            claims={"office": OFFICE},
            solution=[
                sql_step(_query(person)),
                {
                    "answer": f"{name} works from {person['location']} and joined on {person['hire_date'].isoformat()}."
                },
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    today = dt.date(2025, 4, 1)
    veterans = [p for p in people if (today - p["hire_date"]).days >= 365]
    person = rng.choice(veterans)
    name = full_name(person)
    years = (
        today.year
        - person["hire_date"].year
        - ((today.month, today.day) < (person["hire_date"].month, person["hire_date"].day))
    )
    return Instance(
        prompt=(
            f"Today is {today.isoformat()}. Post a short note in #general congratulating {name} on their time "
            "with us: mention them with their @username, say how many full years they have been with the company "
            "and their job title."
        ),
        rubric_items=[
            stated(
                "mention",
                f"#general mentions @{person['chat_username']}",
                "username",
                person["chat_username"],
                1,
                where="#general",
            ),
            stated("years", f"The note says {years} years", "years", years, 3, where="#general"),
            stated(
                "title",
                f"The note names the title {person['title']}",
                "title",
                person["title"],
                1,
                where="#general",
            ),
        ],
        claims={"username": usernames(world, mention=True), "years": count_kind(r"\b(full )?years?\b")},
        solution=[
            sql_step(_query(person)),
            post_step(
                "general",
                f"Congratulations @{person['chat_username']} on {years} years with us as {person['title']}!",
            ),
            {"answer": f"Posted the note for {name} in #general."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
