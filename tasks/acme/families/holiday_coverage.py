"""Who is away. Level 1: a department's approved absences on one date; level 2: a department head's cover question around a public holiday, answered where it was asked (absences and holidays)."""

from __future__ import annotations

import datetime as dt
import re

from families._common import LIMITS_L1, dm, full_name, post_step, sql_step, stated
from families._people import (
    AGENT,
    CHANNELS,
    TODAY,
    active,
    colleagues,
    departments,
    iso,
    overlaps,
    people,
    post,
)
from gym.families import Instance

TITLE = "Holiday cover: who is away"
LEVELS = (1, 2)
SPLIT = "train"
KINDS = ("vacation", "vacation", "training")
LIMITS = {"max_turns": 15, "time_limit_s": 400}


def _away(rows, ids, span, status="approved") -> set[int]:
    return {
        r["employee_id"]
        for r in rows
        if r["employee_id"] in ids
        and r["status"] == status
        and overlaps(span, (r["start_date"], r["end_date"]))
    }


def _holidays(world) -> dict:
    """A kind: the public holidays by name, by any of their names ('Boxing Day / Second Christmas Day'),
    without the note in brackets, the apostrophe optional or curly."""

    def spelled(name: str) -> str:
        names = name.split(" (")[0].split(" / ")
        return "|".join(rf"\b{re.escape(n)}\b".replace("'", "['\u2019]?") for n in names)

    return {
        "values": [
            {"value": n, "regex": spelled(n)} for n in sorted({h["name"] for h in world["holidays"].dicts()})
        ]
    }


def _query(code: str, span) -> str:
    return (
        "SELECT e.first_name || ' ' || e.last_name AS who, t.start_date, t.end_date, t.kind, t.status FROM time_off t "
        "JOIN employees e ON e.id = t.employee_id JOIN departments d ON d.id = e.department_id "
        f"WHERE d.code = '{code}' AND t.start_date <= DATE '{iso(span[1])}' AND t.end_date >= DATE '{iso(span[0])}' "
        "ORDER BY t.start_date"
    )


def generate(world, rng, level: int) -> Instance:
    staff, depts, rows = people(world), departments(world), world["time_off"].dicts()
    if level == 1:
        row = rng.choice([r for r in rows if r["status"] == "approved"])
        day = row["start_date"] + dt.timedelta(
            days=rng.randint(0, min(20, (row["end_date"] - row["start_date"]).days))
        )
        dept = depts[staff[row["employee_id"]]["department_id"]]
        ids = {p["id"] for p in staff.values() if p["department_id"] == dept["id"]}
        away = sorted(_away(rows, ids, (day, day)), key=lambda i: staff[i]["last_name"])
        return Instance(
            prompt=f"Who in {dept['name']} is on approved time off on {iso(day)}? Give their full names.",
            rubric_items=[
                stated(
                    f"away-{i}", f"The answer names {full_name(staff[i])}", "employee", full_name(staff[i])
                )
                for i in away
            ],
            solution=[
                sql_step(_query(dept["code"], (day, day))),
                {"answer": "On approved time off: " + ", ".join(full_name(staff[i]) for i in away) + "."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    holidays = sorted(
        (h for h in world["holidays"].dicts() if h["day"] > TODAY + dt.timedelta(days=7)),
        key=lambda h: (h["day"], h["region"]),
    )
    anchor = rng.choice(holidays)
    monday = anchor["day"] - dt.timedelta(days=anchor["day"].weekday())
    span = (monday, monday + dt.timedelta(days=11))
    code = rng.choice(["FIN", "SAL", "SUP", "ENG", "HR"])
    dept = next(d for d in depts.values() if d["code"] == code)
    head = staff[dept["head_id"]]
    team = [p for p in active(world) if p["department_id"] == dept["id"] and p["id"] != head["id"]]
    team = [p for p in team if p["chat_username"] != AGENT]
    new, statuses = [], ["approved", rng.choice(["approved", "requested"]), "declined"]
    for person in rng.sample(team, len(team)):
        own = [(r["start_date"], r["end_date"]) for r in rows if r["employee_id"] == person["id"]]
        start = span[0] + dt.timedelta(days=rng.randint(0, 9))
        mine = (start, start + dt.timedelta(days=rng.randint(0, 4)))
        if statuses and not any(overlaps(mine, o) for o in own):
            new.append(
                {
                    "employee_id": person["id"],
                    "start_date": mine[0],
                    "end_date": mine[1],
                    "status": statuses.pop(0),
                }
            )
    every = rows + new
    ids = {p["id"] for p in staff.values() if p["department_id"] == dept["id"]}
    away = sorted(_away(every, ids, span), key=lambda i: staff[i]["last_name"])
    # Naming someone whose request is still open is fair (allowed); anyone else not away is a wrong name.
    pending = sorted(_away(every, ids, span, "requested"))
    days = sorted(
        {(h["day"], h["name"]) for h in world["holidays"].dicts() if span[0] <= h["day"] <= span[1]}
    )
    where = f"#{CHANNELS[code]}" if code in CHANNELS else dm(head["chat_username"])
    in_chat = where if code in CHANNELS else "a direct message"
    values = ", ".join(
        f"({r['employee_id']}, '{iso(r['start_date'])}', '{iso(r['end_date'])}', "
        f"'{rng.choice(KINDS)}', '{r['status']}')"
        for r in new
    )
    lines = [f"- {full_name(staff[i])}" for i in away] + [
        f"- Public holiday: {n} ({iso(d)})" for d, n in days
    ]
    return Instance(
        prompt=(
            f"{head['first_name']} asked you in {in_chat} about holiday cover. Look it up and answer there."
        ),
        sql=(
            f"INSERT INTO time_off (employee_id, start_date, end_date, kind, status) VALUES {values};\n"
            if new
            else ""
        ),
        chat={
            "posts": [
                post(
                    where.lstrip("#"),
                    head["chat_username"],
                    (
                        f"@{AGENT} quick one for cover planning: who in {dept['name']} has approved time off between "
                        f"{iso(span[0])} and {iso(span[1])} (holiday season)? And which public holidays fall in that window "
                        "for any of our offices?"
                    ),
                )
            ]
        },
        rubric_items=[
            *[
                stated(
                    f"away-{i}",
                    f"The answer names {full_name(staff[i])} (approved time off)",
                    "colleague",
                    full_name(staff[i]),
                    3,
                    where=where,
                )
                for i in away
            ],
            *[
                stated(f"holiday-{iso(d)}", f"The answer names {n} ({iso(d)})", "holiday", n, 2, where=where)
                for d, n in days
            ],
        ],
        # Coworkers name each other by first name: a colleague is read by full name, first name or @username.
        # Listing people who are not away is the error this task is about: up to the whole task's worth
        # (by default a kind costs at most what its items earn, and the holidays would still pay a roster).
        claims={
            "colleague": colleagues(
                world, allow=[full_name(staff[i]) for i in pending], cap=3 * len(away) + 2 * len(days)
            ),
            "holiday": _holidays(world),
        },
        solution=[
            {
                "tool": "chat.read_channel",
                "args": {
                    "channel": where.lstrip("#") if code in CHANNELS else "@" + head["chat_username"],
                    "limit": 5,
                },
            },
            sql_step(_query(code, span)),
            sql_step(
                f"SELECT day, name, region FROM holidays WHERE day BETWEEN DATE '{iso(span[0])}' AND DATE '{iso(span[1])}'"
            ),
            post_step(
                where.lstrip("#") if code in CHANNELS else "@" + head["chat_username"],
                f"@{head['chat_username']} cover {iso(span[0])} to {iso(span[1])}, approved time off in "
                f"{dept['name']}:\n" + ("\n".join(lines) or "- nobody"),
            ),
            {"answer": f"Answered {head['first_name']} with the approved absences and the holidays."},
        ],
        apps=["db", "chat"],
        limits=LIMITS,
    )
