"""Who runs a department. Level 0: its head; level 1: the head's e-mail and the cost center."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, by_id, full_name, quoted, sql_step, stated
from gym.families import Instance

TITLE = "The head of a department"
LEVELS = (0, 1)
SPLIT = "test"  # held out: never trained on


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    departments = world["departments"].dicts()
    department = rng.choice(departments)
    head = people[department["head_id"]]
    query = (
        "SELECT d.name, d.cost_center, e.first_name, e.last_name, e.email FROM departments d "
        f"JOIN employees e ON e.id = d.head_id WHERE d.name = {quoted(department['name'])}"
    )
    if level == 0:
        return Instance(
            prompt=f"Who heads the {department['name']} department?",
            rubric_items=[stated("head", f"The answer names {full_name(head)}", "employee", full_name(head))],
            solution=[sql_step(query), {"answer": f"{full_name(head)} heads {department['name']}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    return Instance(
        prompt=f"I need to send a budget question to the head of {department['name']}: what is their e-mail, and which cost center does the department book to?",
        rubric_items=[
            stated("email", f"The answer gives {head['email']}", "email", head["email"]),
            stated(
                "cost-center",
                f"The answer gives {department['cost_center']}",
                "cost_center",
                department["cost_center"],
            ),
        ],
        solution=[
            sql_step(query),
            {
                "answer": f"{full_name(head)} ({head['email']}); {department['name']} books to {department['cost_center']}."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
