"""A manager's team. Level 0: how many direct reports; level 1: who they are; level 2: the team list posted in #ops."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    count_regex,
    full_name,
    no_spray,
    post_step,
    posted,
    sql_step,
    text_regex,
)
from gym.families import Instance

TITLE = "A manager's direct reports"
LEVELS = (0, 1, 2)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    people = {p["id"]: p for p in world["employees"].dicts()}
    teams: dict[int, list[dict]] = {}
    for p in people.values():
        if p["manager_id"] and p["status"] == "active":
            teams.setdefault(p["manager_id"], []).append(p)
    manager = people[rng.choice(sorted(teams))]
    team = sorted(teams[manager["id"]], key=lambda p: p["last_name"])
    name = full_name(manager)
    query = (
        "SELECT e.first_name, e.last_name, e.title FROM employees e JOIN employees m ON m.id = e.manager_id "
        f"WHERE m.id = {manager['id']} AND e.status = 'active' ORDER BY e.last_name"
    )
    outsiders = [
        text_regex(full_name(p))
        for p in people.values()
        if p["id"] not in {t["id"] for t in team} | {manager["id"]}
    ]
    if level == 0:
        others = sorted({len(t) for t in teams.values()} - {len(team)})
        return Instance(
            prompt=f"How many active direct reports does {name} have (employee id {manager['id']})?",
            rubric_items=[
                answer(
                    "count",
                    f"The answer says {len(team)}",
                    count_regex(len(team), "reports?|people|employees?|direct"),
                ),
                no_spray(
                    [count_regex(k, "reports?|people|employees?|direct") for k in others], "another count"
                ),
            ],
            solution=[sql_step(query), {"answer": f"{name} has {len(team)} direct reports."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    if level == 1:
        return Instance(
            prompt=f"Who reports directly to {name} (employee id {manager['id']})? Only active employees, full names.",
            rubric_items=[
                *[
                    answer(
                        f"report-{p['id']}", f"The answer names {full_name(p)}", text_regex(full_name(p)), 1
                    )
                    for p in team
                ],
                no_spray(outsiders, "people outside the team", points=-len(team)),
            ],
            solution=[
                sql_step(query),
                {"answer": f"{name}'s direct reports: " + ", ".join(full_name(p) for p in team) + "."},
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    return Instance(
        prompt=(
            f"Post {name}'s team in #ops for the seating plan: one line per active direct report with their "
            f"full name and job title (employee id {manager['id']} is {name})."
        ),
        rubric_items=[
            posted(
                f"line-{p['id']}",
                f"The post lists {full_name(p)} as {p['title']}",
                "ops",
                [text_regex(full_name(p)), text_regex(p["title"])],
                1,
            )
            for p in team
        ]
        + [
            {
                "id": "no-outsiders",
                "description": "Penalty: the post names people outside the team",
                "points": -len(team),
                "kind": "python",
                "section": "chat",
                "check": "rubrics.acme.checks:no_other_matches_posted",
                "args": {
                    "regex": "|".join(outsiders),
                    "allowed": [],
                    "channel": "ops",
                },
                "baseline_ok": True,
                "baseline_reason": "A penalty: it holds until the agent posts someone outside the team.",
            }
        ],
        solution=[
            sql_step(query),
            post_step(
                "ops", f"{name}'s team:\n" + "\n".join(f"- {full_name(p)}, {p['title']}" for p in team)
            ),
            {"answer": f"Posted {name}'s team in #ops."},
        ],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )
