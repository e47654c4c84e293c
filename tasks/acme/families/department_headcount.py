"""Held out of training: headcounts. Level 0: a department's active employees (in all offices or one); level 1: one department per office, or one office per department."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, count_kind, quoted, sql_step, stated
from families._people import active, departments
from gym.families import Instance

TITLE = "Department headcount"
LEVELS = (0, 1)
SPLIT = "test"
OFFICES = ("Berlin", "London", "Remote")
NOUN = r"\b(active|employees?|people|staff|headcount|members?|persons?)\b"
PLACE = {"Berlin": "in the Berlin office", "London": "in the London office", "Remote": "working remotely"}


def generate(world, rng, level: int) -> Instance:
    depts, current = departments(world), active(world)
    count = {
        (d, o): sum(p["department_id"] == d and o in (None, p["location"]) for p in current)
        for d in depts
        for o in (None, *OFFICES)
    }
    if level == 0:
        d, office = rng.choice(sorted((k for k, n in count.items() if n), key=str))
        n, name = count[d, office], depts[d]["name"]
        where = f" {PLACE[office]}" if office else ""
        # Any other count (with people on leave or gone, in all offices, of another team) is a wrong one.
        return Instance(
            prompt=f"How many active employees does the {name} department have{where}?",
            rubric_items=[stated("count", f"The answer says {n}", "headcount", n)],
            claims={"headcount": count_kind(NOUN)},
            solution=[
                sql_step(
                    "SELECT count(*) FROM employees e JOIN departments d ON d.id = e.department_id "
                    f"WHERE d.name = {quoted(name)} AND e.status = 'active'"
                    + (f" AND e.location = '{office}'" if office else "")
                ),
                {"answer": f"{name} has {n} active employees{where}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if rng.random() < 0.5:  # one department, a count per office
        d = rng.choice(sorted(depts))
        rows = [(o, count[d, o]) for o in OFFICES]
        prompt = (
            f"How many active employees does {depts[d]['name']} have in each office (Berlin, London, Remote)? "
            "Give a count per office, 0 where there is nobody."
        )
        group, where = "e.location", f"d.id = {d}"
    else:  # one office, a count per department
        office = rng.choice(OFFICES)
        rows = [(depts[d]["name"], count[d, office]) for d in sorted(depts)]
        prompt = (
            f"How many active employees does each department have {PLACE[office]}? Give a count per "
            "department, 0 where there is nobody."
        )
        group, where = "d.name", f"e.location = '{office}'"
    # A count belongs to the office or department it stands next to ("Berlin: 4"), so the label counts as its noun.
    labels = "|".join(label for label, _ in rows)
    return Instance(
        prompt=prompt,
        rubric_items=[
            stated(
                f"count-{label.lower().replace(' ', '-')}", f"{label}: {n}", "headcount", n, 1, about=label
            )
            for label, n in rows
        ],
        claims={"headcount": count_kind(rf"{NOUN}|\b({labels})\b")},
        solution=[
            sql_step(
                f"SELECT {group}, count(*) FROM employees e JOIN departments d ON d.id = e.department_id "
                f"WHERE e.status = 'active' AND {where} GROUP BY 1 ORDER BY 1"
            ),
            {"answer": "; ".join(f"{label}: {n}" for label, n in rows) + "."},
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
