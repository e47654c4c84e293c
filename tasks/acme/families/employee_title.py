"""Someone's job. Level 0: their title; level 1: office and start date; level 2: a work-anniversary note in #general."""

from __future__ import annotations

import datetime as dt

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    count_regex,
    date_regex,
    full_name,
    no_spray,
    post_step,
    posted,
    quoted,
    sql_step,
    text_regex,
    unprompted,
)
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
        titles = sorted({p["title"] for p in people} - {person["title"]})
        return Instance(
            prompt=f"What is {name}'s job title?",
            rubric_items=[
                answer("title", f"The answer says {person['title']}", text_regex(person["title"])),
                no_spray(unprompted([text_regex(t) for t in titles], person["title"]), "other job titles"),
            ],
            solution=[sql_step(_query(person)), {"answer": f"{name} is {person['title']}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    if level == 1:
        places = sorted({p["location"] for p in people} - {person["location"]})
        return Instance(
            prompt=f"Which office does {name} work from, and when did they join the company?",
            rubric_items=[
                answer("office", f"The answer says {person['location']}", text_regex(person["location"])),
                answer(
                    "joined", f"The answer gives {person['hire_date']}", date_regex(person["hire_date"]), 3
                ),
                no_spray([text_regex(p) for p in places], "other offices"),
            ],
            solution=[
                sql_step(_query(person)),
                {
                    "answer": f"{name} works from {person['location']} and joined on {person['hire_date'].isoformat()}."
                },
            ],
            apps=["postgres"],
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
            posted(
                "note",
                f"#general congratulates @{person['chat_username']} on {years} years",
                "general",
                [rf"@{person['chat_username']}\b", count_regex(years, "years?")],
                4,
            ),
            posted(
                "title",
                f"The note names the title {person['title']}",
                "general",
                [text_regex(person["title"])],
                1,
            ),
        ],
        solution=[
            sql_step(_query(person)),
            post_step(
                "general",
                f"Congratulations @{person['chat_username']} on {years} years with us as {person['title']}!",
            ),
            {"answer": f"Posted the note for {name} in #general."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
