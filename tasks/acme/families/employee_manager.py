"""Who manages whom. Level 0: someone's manager; level 1: a manager's direct reports (optionally in one office) with titles; level 2: a 'meet the team' intro in #general naming manager, department and office."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, LIMITS_L2, full_name, post_step, quoted, sql_step, stated
from families._people import OFFICE, active, department_names, departments, people, usernames
from gym.families import Instance

TITLE = "An employee's manager and team"
LEVELS = (0, 1, 2)
SPLIT = "train"
QUERY = (
    "SELECT e.first_name, e.last_name, e.title, e.location, e.chat_username, d.name AS department, "
    "m.first_name || ' ' || m.last_name AS manager FROM employees e JOIN departments d ON d.id = e.department_id "
    "LEFT JOIN employees m ON m.id = e.manager_id WHERE e.first_name || ' ' || e.last_name = {name}"
)


def generate(world, rng, level: int) -> Instance:
    staff = people(world)
    managers = sorted({p["manager_id"] for p in staff.values() if p["manager_id"]})
    if level == 1:
        return _team(world, rng, staff, managers)
    person = rng.choice([p for p in active(world) if p["manager_id"]])
    name, boss = full_name(person), staff[person["manager_id"]]
    query = sql_step(QUERY.format(name=quoted(name)))
    if level == 0:
        return Instance(
            prompt=f"Who is {name}'s manager? Give their full name.",
            rubric_items=[
                stated("manager", f"The answer names {full_name(boss)}", "employee", full_name(boss))
            ],
            solution=[query, {"answer": f"{name}'s manager is {full_name(boss)}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    department = departments(world)[person["department_id"]]["name"]
    message = (
        f"Meet the team: @{person['chat_username']} is our {person['title']} in {department}, working from "
        f"{'home (remote)' if person['location'] == 'Remote' else 'the ' + person['location'] + ' office'} "
        f"and reporting to {full_name(boss)}. Say hi!"
    )
    # Another manager, department or office in the intro is a wrong value (grader.claims).
    return Instance(
        prompt=(
            f"We are running 'meet the team' intros in #general this week. Post one for {name}: mention them "
            "with their @username and say which department they are in, which office they work from and who "
            "their manager is (full name)."
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
            stated(
                "manager",
                f"The intro names the manager {full_name(boss)}",
                "employee",
                full_name(boss),
                2,
                where="#general",
            ),
            stated(
                "department",
                f"The intro names the department {department}",
                "department",
                department,
                1,
                where="#general",
            ),
            stated(
                "office",
                f"The intro names the office {person['location']}",
                "office",
                person["location"],
                1,
                where="#general",
            ),
        ],
        claims={
            "username": usernames(world, mention=True),
            "office": OFFICE,
            "department": department_names(world),
        },
        solution=[query, post_step("general", message), {"answer": f"Posted {name}'s intro in #general."}],
        apps=["db", "chat"],
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
    # Each report's title counts next to their name; anyone outside the group is a wrong name.
    return Instance(
        prompt=(
            f"Who reports directly to {full_name(boss)}{where}? Only active employees; give each one's full "
            "name and job title."
        ),
        rubric_items=[
            item
            for p in team
            for item in (
                stated(f"report-{p['id']}", f"The answer lists {full_name(p)}", "employee", full_name(p), 1),
                stated(
                    f"title-{p['id']}",
                    f"{full_name(p)} is {p['title']}",
                    "title",
                    p["title"],
                    1,
                    about=full_name(p),
                ),
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
        apps=["db"],
        limits=LIMITS_L1,
    )
