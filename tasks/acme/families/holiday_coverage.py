"""Who is away. Level 1: a department's approved absences on one date; level 2: a department head's cover question around a public holiday, answered where it was asked (absences and holidays)."""

from __future__ import annotations

import datetime as dt

from families._common import LIMITS_L1, answer, date_regex, dm, full_name, no_spray, post_step, sql_step
from families._people import (
    AGENT,
    CHANNELS,
    TODAY,
    active,
    departments,
    iso,
    item,
    loose,
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
    return {r["employee_id"] for r in rows if r["employee_id"] in ids and r["status"] == status
            and overlaps(span, (r["start_date"], r["end_date"]))}  # fmt: skip


def _holiday(name: str, day: dt.date, span) -> str:
    """A holiday by name, or by date unless that date is an end of the window (echoed by any answer)."""
    by_name = f"(?i:{name.split(' (')[0]})"
    return by_name if day in span else f"{by_name}|{date_regex(day)}"


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
                *[
                    answer(f"away-{i}", f"The answer names {full_name(staff[i])}", loose(full_name(staff[i])))
                    for i in away
                ],
                no_spray(
                    [loose(full_name(p)) for p in staff.values() if p["id"] not in away],
                    "people who are not away that day",
                    -2 * len(away),
                ),
            ],  # fmt: skip
            solution=[
                sql_step(_query(dept["code"], (day, day))),
                {"answer": "On approved time off: " + ", ".join(full_name(staff[i]) for i in away) + "."},
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    holidays = sorted((h for h in world["holidays"].dicts() if h["day"] > TODAY + dt.timedelta(days=7)),
                      key=lambda h: (h["day"], h["region"]))  # fmt: skip
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
    pending = _away(
        every, ids, span, "requested"
    )  # mentioning a request still open is fair, listing a declined one is not
    decoys = sorted(_away(every, ids, span, "declined") - set(away) - pending)
    free = [p for p in team if p["id"] not in {*away, *decoys, *pending}]
    days = sorted(
        {(h["day"], h["name"]) for h in world["holidays"].dicts() if span[0] <= h["day"] <= span[1]}
    )
    where = CHANNELS.get(code) or dm(head["chat_username"])
    in_chat = f"#{where}" if code in CHANNELS else "a direct message"
    first = lambda p: rf"(?i:\b{p['first_name']}\b)"  # noqa: E731 - first names are unique in the company
    values = ", ".join(f"({r['employee_id']}, '{iso(r['start_date'])}', '{iso(r['end_date'])}', "
                       f"'{rng.choice(KINDS)}', '{r['status']}')" for r in new)  # fmt: skip
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
                    where,
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
            item(
                "answered",
                f"You answered {head['first_name']} in {in_chat}",
                "posted",
                {"channel": where, "regex": rf"(?i:{head['first_name']}|@{head['chat_username']})"},
                1,
                "reply",
            ),
            *[
                item(
                    f"away-{i}",
                    f"The answer names {full_name(staff[i])} (approved time off)",
                    "posted",
                    {"channel": where, "regex": first(staff[i])},
                    3,
                    "time off",
                )
                for i in away
            ],
            *[
                item(
                    f"holiday-{iso(d)}",
                    f"The answer names {n} ({iso(d)})",
                    "posted",
                    {"channel": where, "regex": _holiday(n, d, span)},
                    2,
                    "holidays",
                )
                for d, n in days
            ],
            *[
                item(
                    f"not-{i}",
                    f"Penalty: the answer lists {full_name(staff[i])}, whose time off was declined",
                    "posted",
                    {"channel": where, "regex": first(staff[i])},
                    -2,
                    "penalties",
                    negate=True,
                    reason="A penalty: it holds unless the answer names them.",
                )
                for i in decoys
            ],
            *[
                item(
                    "only-away",
                    "Penalty: the answer lists people who are not away",
                    "posted",
                    {"channel": where, "regex": "|".join(loose(full_name(p)) for p in free)},
                    -3,
                    "penalties",
                    negate=True,
                    reason="A penalty: it holds unless the answer names them.",
                )
                for _ in free[:1]
            ],
        ],  # fmt: skip
        solution=[
            {
                "tool": "chat.read_channel",
                "args": {"channel": where if code in CHANNELS else "@" + head["chat_username"], "limit": 5},
            },
            sql_step(_query(code, span)),
            sql_step(
                f"SELECT day, name, region FROM holidays WHERE day BETWEEN DATE '{iso(span[0])}' AND DATE '{iso(span[1])}'"
            ),
            post_step(
                where if code in CHANNELS else "@" + head["chat_username"],
                f"@{head['chat_username']} cover {iso(span[0])} to {iso(span[1])}, approved time off in "
                f"{dept['name']}:\n" + ("\n".join(lines) or "- nobody"),
            ),
            {"answer": f"Answered {head['first_name']} with the approved absences and the holidays."},
        ],  # fmt: skip
        apps=["postgres", "chat"],
        limits=LIMITS,
    )
