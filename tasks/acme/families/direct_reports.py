"""A manager's team. Level 0: how many direct reports; level 1: who they are; level 2: the team list posted in #ops."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    count_kind,
    full_name,
    post_step,
    sql_step,
    stated,
)
from gym.families import Instance

TITLE = "A manager's direct reports"
LEVELS = (0, 1, 2)
SPLIT = "train"
# Not "employees": the prompt says "employee id 12", and that 12 counts nothing.
REPORTS = r"\b((direct )?reports?|people|staff|team members?)\b"


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
    if level == 0:
        return Instance(
            prompt=f"How many active direct reports does {name} have (employee id {manager['id']})?",
            rubric_items=[stated("count", f"The answer says {len(team)}", "reports", len(team))],
            claims={"reports": count_kind(REPORTS)},
            solution=[sql_step(query), {"answer": f"{name} has {len(team)} direct reports."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        # Anyone outside the team (someone who left, a skip-level report) is a wrong name (grader.claims).
        return Instance(
            prompt=f"Who reports directly to {name} (employee id {manager['id']})? Only active employees, full names.",
            rubric_items=[
                stated(f"report-{p['id']}", f"The answer names {full_name(p)}", "employee", full_name(p), 1)
                for p in team
            ],
            solution=[
                sql_step(query),
                {"answer": f"{name}'s direct reports: " + ", ".join(full_name(p) for p in team) + "."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    # One line per report: the title counts next to the name it stands with.
    return Instance(
        prompt=(
            f"Post {name}'s team in #ops for the seating plan: one line per active direct report with their "
            f"full name and job title (employee id {manager['id']} is {name})."
        ),
        rubric_items=[
            claim
            for p in team
            for claim in (
                stated(
                    f"line-{p['id']}",
                    f"The post lists {full_name(p)}",
                    "employee",
                    full_name(p),
                    1,
                    where="#ops",
                ),
                stated(
                    f"title-{p['id']}",
                    f"{full_name(p)} is {p['title']}",
                    "title",
                    p["title"],
                    1,
                    where="#ops",
                    about=full_name(p),
                ),
            )
        ],
        solution=[
            sql_step(query),
            post_step(
                "ops", f"{name}'s team:\n" + "\n".join(f"- {full_name(p)}, {p['title']}" for p in team)
            ),
            {"answer": f"Posted {name}'s team in #ops."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
