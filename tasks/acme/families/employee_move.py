"""An HR change, and only that change. Level 0: a new office; level 1: a move to another department under its head; level 2: the move announced in #general."""

from __future__ import annotations

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    execute_step,
    full_name,
    post_step,
    sql_step,
    state,
    stated,
)
from gym.families import Instance

TITLE = "Record a move in the employee directory"
LEVELS = (0, 1, 2)
SPLIT = "train"


def generate(world, rng, level: int) -> Instance:
    people = [p for p in world["employees"].dicts() if p["status"] == "active"]
    departments = by_id(world, "departments")
    heads = {d["head_id"] for d in departments.values()}
    person = rng.choice([p for p in people if p["id"] not in heads])
    name = full_name(person)
    where = f"id = {person['id']}"
    if level == 0:
        office = rng.choice(sorted({p["location"] for p in people} - {person["location"]}))
        return Instance(
            prompt=f"{name} (employee id {person['id']}) has moved to the {office} office. Update their location in the employee directory.",
            rubric_items=[
                state(
                    "office",
                    f"{name}'s location is {office}",
                    f"SELECT location FROM employees WHERE {where}",
                    office,
                )
            ],
            solution=[
                execute_step(f"UPDATE employees SET location = '{office}' WHERE {where}"),
                {"answer": f"{name}'s location is now {office}."},
            ],
            damage={"allow": [{"table": "employees", "columns": ["location"], "at_most": 1}]},
            apps=["db"],
            limits=LIMITS_L0,
        )
    target = departments[rng.choice(sorted(set(departments) - {person["department_id"]}))]
    items = [
        state(
            "department",
            f"{name} is in {target['name']}",
            f"SELECT department_id FROM employees WHERE {where}",
            target["id"],
        ),
        state(
            "manager",
            f"{name} reports to the head of {target['name']}",
            f"SELECT manager_id FROM employees WHERE {where}",
            target["head_id"],
            2,
        ),
    ]
    steps = [
        sql_step(f"SELECT id, name, head_id FROM departments WHERE name = '{target['name']}'"),
        execute_step(
            f"UPDATE employees SET department_id = {target['id']}, manager_id = {target['head_id']} WHERE {where}"
        ),
    ]
    prompt = (
        f"{name} (employee id {person['id']}) is moving to the {target['name']} department and will report to "
        "that department's head. Update the employee directory: department and manager, nothing else."
    )
    apps = ["db"]
    if level == 2:
        prompt += f" Then announce the move in #general, naming {person['first_name']}, the department and their new manager."
        head = by_id(world, "employees")[target["head_id"]]
        # The new manager is what the announcement states that the prompt does not (the department it
        # names): another manager is a wrong name.
        items.append(
            stated(
                "announced",
                f"#general hears {name} reports to {full_name(head)}",
                "employee",
                full_name(head),
                3,
                where="#general",
            )
        )
        steps.append(
            post_step(
                "general", f"{name} joins {target['name']} today, reporting to {full_name(head)}. Welcome!"
            )
        )
        apps = ["db", "chat"]
    return Instance(
        prompt=prompt,
        rubric_items=items,
        solution=[*steps, {"answer": f"{name} is now in {target['name']}."}],
        damage={"allow": [{"table": "employees", "columns": ["department_id", "manager_id"], "at_most": 1}]},
        apps=apps,
        limits=LIMITS_L1 if level == 1 else LIMITS_L2,
    )
