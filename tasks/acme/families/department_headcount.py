"""Held out of training: headcounts. Level 0: a department's active employees (in all offices or one); level 1: one department per office, or one office per department."""

from __future__ import annotations

from families._common import LIMITS_L0, LIMITS_L1, answer, count_regex, no_spray, quoted, sql_step
from families._people import active, departments, people
from gym.families import Instance

TITLE = "Department headcount"
LEVELS = (0, 1)
SPLIT = "test"
OFFICES = ("Berlin", "London", "Remote")
NOUN = "active|employees?|people|staff|headcount|members?|persons?"
PLACE = {"Berlin": "in the Berlin office", "London": "in the London office", "Remote": "working remotely"}


def _next_to(label: str, n: int) -> str:
    """`label` followed by its count on the same line ('Berlin: 4', 'London - 2 people')."""
    return rf"(?i:{label}[^\d\n]{{0,25}}(?<![\d.,]){n}(?!\d|[.,]\d))"


def _other_than(label: str, n: int) -> str:
    """`label` followed by a count that is not `n`."""
    return rf"(?i:{label}[^\d\n]{{0,25}}(?<![\d.,])(?!{n}(?!\d|[.,]\d))\d+(?!\d|[.,]\d))"


def generate(world, rng, level: int) -> Instance:
    depts, staff, current = departments(world), people(world), active(world)
    count = {(d, o): sum(p["department_id"] == d and o in (None, p["location"]) for p in current)
             for d in depts for o in (None, *OFFICES)}  # fmt: skip
    if level == 0:
        d, office = rng.choice(sorted((k for k, n in count.items() if n), key=str))
        n, name = count[d, office], depts[d]["name"]
        listed = [p for p in staff.values() if p["department_id"] == d and office in (None, p["location"])]
        wrong = {len(listed), sum(p["status"] != "terminated" for p in listed), count[d, None]}
        wrong = (wrong | {count[e, office] for e in depts}) - {
            n
        }  # on leave or gone, all offices, other teams
        where = f" {PLACE[office]}" if office else ""
        return Instance(
            prompt=f"How many active employees does the {name} department have{where}?",
            rubric_items=[
                answer("count", f"The answer says {n}", count_regex(n, NOUN)),
                no_spray(
                    [count_regex(k, NOUN) for k in sorted(wrong)],
                    "a count with people on leave, who left, or in other offices",
                ),
            ],
            solution=[
                sql_step(
                    "SELECT count(*) FROM employees e JOIN departments d ON d.id = e.department_id "
                    f"WHERE d.name = {quoted(name)} AND e.status = 'active'"
                    + (f" AND e.location = '{office}'" if office else "")
                ),
                {"answer": f"{name} has {n} active employees{where}."},
            ],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    by_office = rng.random() < 0.5
    if by_office:  # one department, a count per office
        d = rng.choice(sorted(depts))
        rows = [(o, count[d, o]) for o in OFFICES]
        prompt = (f"How many active employees does {depts[d]['name']} have in each office (Berlin, London, Remote)? "
                  "Give a count per office, 0 where there is nobody.")  # fmt: skip
        group = "e.location"
        where = f"d.id = {d}"
    else:  # one office, a count per department
        office = rng.choice(OFFICES)
        rows = [(depts[d]["name"], count[d, office]) for d in sorted(depts)]
        prompt = (f"How many active employees does each department have {PLACE[office]}? Give a count per "
                  "department, 0 where there is nobody.")  # fmt: skip
        group = "d.name"
        where = f"e.location = '{office}'"
    return Instance(
        prompt=prompt,
        rubric_items=[
            *[
                answer(f"count-{label.lower().replace(' ', '-')}", f"{label}: {n}", _next_to(label, n), 1)
                for label, n in rows
            ],
            no_spray(
                [_other_than(label, n) for label, n in rows], "a wrong count for one of them", -len(rows)
            ),
        ],  # fmt: skip
        solution=[
            sql_step(
                f"SELECT {group}, count(*) FROM employees e JOIN departments d ON d.id = e.department_id "
                f"WHERE e.status = 'active' AND {where} GROUP BY 1 ORDER BY 1"
            ),
            {"answer": "; ".join(f"{label}: {n}" for label, n in rows) + "."},
        ],
        apps=["postgres"],
        limits=LIMITS_L1,
    )
