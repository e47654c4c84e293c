"""Where someone works. Level 0: their department; level 1: also their manager."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, quoted, sql_step, stated
from gym.families import Instance

TITLE = "An employee's department"
LEVELS = (0, 1)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    departments = {d["id"]: d["name"] for d in world["departments"].dicts()}
    people = {e["id"]: e for e in world["employees"].dicts()}
    person = people[rng.choice(sorted(i for i, e in people.items() if e["manager_id"]))]
    name = f"{person['first_name']} {person['last_name']}"
    department = departments[person["department_id"]]
    query = (
        "SELECT e.first_name, e.last_name, d.name AS department FROM employees e "
        f"JOIN departments d ON d.id = e.department_id WHERE e.first_name || ' ' || e.last_name = {quoted(name)}"
    )
    items = [stated("department", f"The answer says {department}", "department", department)]
    if level == 0:
        return Instance(
            prompt=f"Which department does {name} work in?",
            rubric_items=items,
            solution=[sql_step(query), {"answer": f"{name} works in {department}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    boss = people[person["manager_id"]]
    boss_name = f"{boss['first_name']} {boss['last_name']}"
    return Instance(
        prompt=f"Which department does {name} work in, and who is their manager?",
        rubric_items=[
            *items,
            stated("manager", f"The answer names the manager {boss_name}", "employee", boss_name),
        ],
        solution=[
            sql_step(query),
            sql_step(
                "SELECT m.first_name || ' ' || m.last_name AS manager FROM employees e JOIN employees m ON m.id = e.manager_id "
                f"WHERE e.first_name || ' ' || e.last_name = {quoted(name)}"
            ),
            {"answer": f"{name} works in {department}; their manager is {boss_name}."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
