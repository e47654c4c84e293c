"""Who manages whom. Level 0: someone's manager; level 1: a manager's direct reports (optionally in one office) with titles; level 2: a 'meet the team' intro in #general naming manager, department and office."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    answer,
    full_name,
    no_spray,
    post_step,
    quoted,
    sql_step,
    text_regex,
    unprompted,
)
from families._people import active, departments, item, names, people
from gym.families import Instance

TITLE = "An employee's manager and team"
LEVELS = (0, 1, 2)
SPLIT = "train"
QUERY = (
    "SELECT e.first_name, e.last_name, e.title, e.location, e.chat_username, d.name AS department, "
    "m.first_name || ' ' || m.last_name AS manager FROM employees e JOIN departments d ON d.id = e.department_id "
    "LEFT JOIN employees m ON m.id = e.manager_id WHERE e.first_name || ' ' || e.last_name = {name}"
)


def _office(location: str) -> str:
    return r"(?i:\bremote)" if location == "Remote" else text_regex(location)


def generate(world, rng, level: int) -> Instance:
    staff = people(world)
    managers = sorted({p["manager_id"] for p in staff.values() if p["manager_id"]})
    if level == 1:
        return _team(world, rng, staff, managers)
    person = rng.choice([p for p in active(world) if p["manager_id"]])
    name, boss = full_name(person), staff[person["manager_id"]]
    query = sql_step(QUERY.format(name=quoted(name)))
    others = [staff[m] for m in managers if m not in (boss["id"], person["id"])]
    if level == 0:
        prompt = f"Who is {name}'s manager? Give their full name."
        return Instance(
            prompt=prompt,
            rubric_items=[
                answer("manager", f"The answer names {full_name(boss)}", text_regex(full_name(boss))),
                no_spray(unprompted(names(others), prompt), "other managers"),
            ],
            solution=[query, {"answer": f"{name}'s manager is {full_name(boss)}."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    department = departments(world)[person["department_id"]]["name"]
    handle = rf"@{person['chat_username']}\b"
    message = (
        f"Meet the team: @{person['chat_username']} is our {person['title']} in {department}, working from "
        f"{'home (remote)' if person['location'] == 'Remote' else 'the ' + person['location'] + ' office'} "
        f"and reporting to {full_name(boss)}. Say hi!"
    )
    return Instance(
        prompt=(
            f"We are running 'meet the team' intros in #general this week. Post one for {name}: mention them "
            "with their @username and say which department they are in, which office they work from and who "
            "their manager is (full name)."
        ),
        rubric_items=[
            item(
                "intro",
                f"#general introduces @{person['chat_username']} with manager {full_name(boss)}",
                "posted",
                {"channel": "general", "all_of": [handle, text_regex(full_name(boss))]},
                3,
                "chat",
            ),
            item(
                "department",
                f"The intro names the department {department}",
                "posted",
                {"channel": "general", "all_of": [handle, text_regex(department)]},
                1,
                "chat",
            ),
            item(
                "office",
                f"The intro names the office {person['location']}",
                "posted",
                {"channel": "general", "all_of": [handle, _office(person["location"])]},
                1,
                "chat",
            ),
            item(
                "no-other-manager",
                "Penalty: the post names another manager",
                "no_other_matches_posted",
                {"regex": "|".join(names(others)), "allowed": [], "channel": "general"},
                -2,
                "chat",
                reason="A penalty: it holds until the agent posts another manager's name.",
            ),
        ],
        solution=[query, post_step("general", message), {"answer": f"Posted {name}'s intro in #general."}],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )


def _team(world, rng, staff, managers) -> Instance:
    """Level 1: a manager's active direct reports, in every office or in one."""
    choices = []
    for m in managers:
        team = [p for p in active(world) if p["manager_id"] == m]
        offices = sorted({p["location"] for p in team})
        choices += [(m, None)] + ([(m, o) for o in offices] if len(offices) > 1 else [])
    boss_id, office = rng.choice(choices)
    boss = staff[boss_id]
    team = sorted(
        (p for p in active(world) if p["manager_id"] == boss_id and office in (None, p["location"])),
        key=lambda p: p["last_name"],
    )
    where = f" and work from the {office} office" if office else ""
    members = {p["id"] for p in team} | {boss_id}
    return Instance(
        prompt=(
            f"Who reports directly to {full_name(boss)}{where}? Only active employees; give each one's full "
            "name and job title."
        ),
        rubric_items=[
            answer(
                f"report-{p['id']}",
                f"The answer lists {full_name(p)} as {p['title']}",
                rf"{text_regex(full_name(p))}[^\n]{{0,60}}?{text_regex(p['title'])}",
                1,
            )
            for p in team
        ]
        + [
            no_spray(
                names(p for p in staff.values() if p["id"] not in members),
                "people outside that group",
                -len(team),
            )
        ],
        solution=[
            sql_step(
                "SELECT e.first_name, e.last_name, e.title, e.location, e.status FROM employees e "
                f"JOIN employees m ON m.id = e.manager_id WHERE m.first_name || ' ' || m.last_name = "
                f"{quoted(full_name(boss))} ORDER BY e.last_name"
            ),
            {"answer": "\n".join(f"- {full_name(p)}, {p['title']}" for p in team)},
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
