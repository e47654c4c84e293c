"""Time-off decisions. Level 0: a request's status; level 1: approve one named request; level 2: decide a department's pending requests by the overlap rule and tell each requester."""

from __future__ import annotations

import datetime as dt

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    dm,
    dm_step,
    execute_step,
    full_name,
    item,
    sql_step,
    stated,
)
from families._people import AGENT, TIME_OFF_STATUS, TODAY, active, departments, iso, overlaps, people
from gym.families import Instance

TITLE = "Approve or decline time off"
LEVELS = (0, 1, 2)
SPLIT = "train"
STATUSES = ("requested", "approved", "declined")
KINDS = ("vacation", "training", "vacation", "vacation")
GRANT = "GRANT UPDATE (status) ON time_off TO agent;\n"  # the agent's role cannot decide time off otherwise
LIMITS = {"max_turns": 20, "time_limit_s": 600}
# A decision recorded in the time-off table: doing nothing leaves a request requested, which costs
# nothing; a wrong decision costs what a right one earns.
DECISION = {"values": ["requested", "approved", "declined"], "allow": ["requested"]}
# The outcome as told by direct message, declined in its usual words.
OUTCOME = {
    "values": [
        "approved",
        {"value": "declined", "regex": r"\b(declined|rejected|denied|refused|not (been )?approved)\b"},
    ]
}


def _free_span(rng, taken: list[tuple[dt.date, dt.date]], first: int = 7, last: int = 200):
    """A span of 1-5 days after today that overlaps none of `taken`."""
    while True:
        start = TODAY + dt.timedelta(days=rng.randint(first, last))
        span = (start, start + dt.timedelta(days=rng.randint(0, 4)))
        if not any(overlaps(span, t) for t in taken):
            return span


def _clash_span(rng, absences, taken):
    """A span of 1-5 days after today that overlaps one of `absences` but none of `taken` (None: no such)."""
    future = [a for a in absences if a[1] >= TODAY + dt.timedelta(days=3)]
    for _ in range(200 if future else 0):
        a = rng.choice(future)
        start = max(
            a[0] + dt.timedelta(days=rng.randint(-3, (a[1] - a[0]).days)), TODAY + dt.timedelta(days=3)
        )
        span = (start, start + dt.timedelta(days=rng.randint(0, 4)))
        if overlaps(span, a) and not any(overlaps(span, t) for t in taken):
            return span
    return None


def _insert(rows) -> str:
    values = ", ".join(f"({p['id']}, '{iso(s)}', '{iso(e)}', '{k}', '{st}')" for p, s, e, k, st in rows)
    return f"INSERT INTO time_off (employee_id, start_date, end_date, kind, status) VALUES {values};\n"


def _where(p, start) -> str:
    return f"employee_id = {p['id']} AND start_date = DATE '{iso(start)}'"


def generate(world, rng, level: int) -> Instance:
    rows = world["time_off"].dicts()
    if level == 2:
        return _department(world, rng, rows)
    person = rng.choice([p for p in active(world) if p["chat_username"] != AGENT])
    own = [(r["start_date"], r["end_date"]) for r in rows if r["employee_id"] == person["id"]]
    first = _free_span(rng, own)
    second = _free_span(rng, [*own, first])
    kind, name = rng.choice(KINDS), full_name(person)
    what = f"{name}'s {kind} request for {iso(first[0])} to {iso(first[1])}"
    lookup = sql_step(
        "SELECT t.id, t.start_date, t.end_date, t.kind, t.status FROM time_off t JOIN employees e ON "
        f"e.id = t.employee_id WHERE e.first_name || ' ' || e.last_name = '{name.replace(chr(39), chr(39) * 2)}'"
    )
    if level == 0:
        status, other = rng.sample(STATUSES, 2)
        return Instance(
            prompt=f"What is the status of {what}? Answer with the status as recorded.",
            sql=_insert([(person, *first, kind, status), (person, *second, kind, other)]),
            rubric_items=[stated("status", f"The answer says {status}", "time_off_status", status)],
            claims={"time_off_status": TIME_OFF_STATUS},
            solution=[lookup, {"answer": f"It is {status}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    boss = people(world).get(person["manager_id"]) or person
    return Instance(
        prompt=f"{full_name(boss)} has signed off {what}. Please approve it in the time-off table.",
        sql=GRANT + _insert([(person, *first, kind, "requested"), (person, *second, kind, "requested")]),
        rubric_items=[
            stated(
                "approved",
                f"{what} is approved",
                "decision",
                "approved",
                4,
                where=f"sql:SELECT status FROM time_off WHERE {_where(person, first[0])}",
            ),
            item(
                "other-untouched",
                f"Penalty: {name}'s other request ({iso(second[0])}) was decided too",
                "sql.value_equals",
                {
                    "query": f"SELECT status FROM time_off WHERE {_where(person, second[0])}",
                    "expected": "requested",
                },
                -3,
                "database",
                reason="A penalty: it holds until the agent decides the other request.",
            ),
        ],
        solution=[
            lookup,
            execute_step(f"UPDATE time_off SET status = 'approved' WHERE {_where(person, first[0])}"),
            {"answer": f"Approved {what}."},
        ],
        claims={"decision": DECISION},
        damage={"allow": [{"table": "time_off", "columns": ["status"], "at_most": 1}]},
        apps=["db"],
        limits=LIMITS_L1,
    )


def _department(world, rng, rows) -> Instance:
    staff, depts = people(world), departments(world)
    code = rng.choice(["FIN", "HR", "SAL", "SUP", "ENG"])
    dept = next(d for d in depts.values() if d["code"] == code)
    inside = {p["id"] for p in staff.values() if p["department_id"] == dept["id"]}
    approved = [r for r in rows if r["status"] == "approved" and r["employee_id"] in inside]
    pending = [r for r in rows if r["status"] == "requested" and r["employee_id"] in inside]
    busy = {r["employee_id"] for r in pending}
    free = [
        p for p in active(world) if p["id"] in inside and p["id"] not in busy and p["chat_username"] != AGENT
    ]
    clashes = [True, False, rng.random() < 0.5]
    new = []
    for person in rng.sample(free, len(free)):
        if not clashes:
            break
        others = [(r["start_date"], r["end_date"]) for r in approved if r["employee_id"] != person["id"]]
        own = [(r["start_date"], r["end_date"]) for r in rows if r["employee_id"] == person["id"]]
        taken = own + [(r["start_date"], r["end_date"]) for r in pending] + [(s, e) for _, s, e, _, _ in new]
        span = _clash_span(rng, others, taken) if clashes[0] else _free_span(rng, taken + others)
        if span:
            clashes.pop(0)
            new.append((person, *span, rng.choice(KINDS), "requested"))
    requests = [(staff[r["employee_id"]], r["start_date"], r["end_date"]) for r in pending]
    requests += [(p, s, e) for p, s, e, _, _ in new]
    decided = []
    for p, s, e in sorted(requests, key=lambda r: r[1]):
        clash = any(
            overlaps((s, e), (r["start_date"], r["end_date"]))
            for r in approved
            if r["employee_id"] != p["id"]
        )
        decided.append((p, s, e, "declined" if clash else "approved"))
    others_pending = [r["id"] for r in rows if r["status"] == "requested" and r["employee_id"] not in inside]
    items = []
    for p, s, e, status in decided:
        told = dm(p["chat_username"])
        items += [
            stated(
                f"status-{p['id']}-{iso(s)}",
                f"{full_name(p)}'s request from {iso(s)} is {status}",
                "decision",
                status,
                3,
                where=f"sql:SELECT status FROM time_off WHERE {_where(p, s)}",
            ),
            stated(
                f"told-{p['id']}-{iso(s)}",
                f"{full_name(p)} is told by direct message: {status}",
                "outcome",
                status,
                1,
                where=told,
            ),
            stated(
                f"dates-{p['id']}-{iso(s)}",
                f"{full_name(p)} is told the dates: {iso(s)}",
                "date",
                iso(s),
                1,
                where=told,
            ),
        ]
        if e != s:
            items.append(
                stated(
                    f"until-{p['id']}-{iso(s)}",
                    f"{full_name(p)} is told the dates: until {iso(e)}",
                    "date",
                    iso(e),
                    1,
                    where=told,
                )
            )
    items.append(
        item(
            "others-untouched",
            "Penalty: another department's pending request was decided",
            "sql.value_equals",
            {
                "query": "SELECT count(*) FROM time_off WHERE status <> 'requested' AND id IN "
                f"({', '.join(map(str, others_pending))})",
                "expected": 0,
            },
            -3,
            "database",
            reason="A penalty: it holds until the agent decides another department's request.",
        )
    )
    name = dept["name"]
    return Instance(
        prompt=(
            f"Please work through the pending time-off requests (status requested) of the {name} department. "
            f"Our rule: approve a request unless it overlaps an absence of someone else in {name} that already "
            "went through approval; decline it if it does. Record each decision in the time-off table, then send each requester a "
            "direct message with the outcome and the dates of their request."
        ),
        sql=GRANT + _insert(new),
        rubric_items=items,
        solution=[
            sql_step(
                "SELECT t.id, e.first_name || ' ' || e.last_name AS who, e.chat_username, t.start_date, t.end_date, "
                "t.status FROM time_off t JOIN employees e ON e.id = t.employee_id JOIN departments d ON "
                f"d.id = e.department_id WHERE d.code = '{code}' AND t.status IN ('requested', 'approved') ORDER BY t.start_date"
            ),
            *[
                execute_step(f"UPDATE time_off SET status = '{st}' WHERE {_where(p, s)}")
                for p, s, e, st in decided
            ],
            *[
                dm_step(
                    p["chat_username"],
                    f"Hi {p['first_name']}, your time-off request for {iso(s)} to {iso(e)} is "
                    + (
                        "approved. Enjoy!"
                        if st == "approved"
                        else "declined: it overlaps a colleague's absence that is already booked."
                    ),
                )
                for p, s, e, st in decided
            ],
            {"answer": "; ".join(f"{full_name(p)} {iso(s)}: {st}" for p, s, e, st in decided)},
        ],
        claims={"decision": DECISION, "outcome": OUTCOME},
        damage={"allow": [{"table": "time_off", "columns": ["status"], "at_most": len(decided)}]},
        apps=["db", "chat"],
        limits=LIMITS,
    )
