"""Onboarding a generated new hire. Level 1: the employee row from the given details; level 2: the checklist from an announcement in #general (row, channels, welcome, note to the Head of People)."""

from __future__ import annotations

import datetime as dt

from families._common import (
    LIMITS_L1,
    MONTHS,
    dm,
    dm_step,
    execute_step,
    full_name,
    item,
    post_step,
    sql_step,
    stated,
)
from families._people import AGENT, CHANNELS, TODAY, colleagues, departments, head_of, iso, people, post
from gym.families import Instance

TITLE = "Onboard a new hire"
LEVELS = (1, 2)
SPLIT = "train"
FIRST = (
    "Anna",
    "Marco",
    "Leila",
    "Tom",
    "Ines",
    "Pavel",
    "Clara",
    "Omar",
    "Nina",
    "Erik",
    "Sofia",
    "Jamal",
    "Mira",
    "Hugo",
    "Elif",
    "Kofi",
    "Greta",
    "Ivan",
    "Maya",
    "Luca",
)
LAST = (
    "Berger",
    "Okoro",
    "Lindgren",
    "Moreau",
    "Kowalski",
    "Haddad",
    "Jensen",
    "Romano",
    "Fischer",
    "Nakamura",
    "Sousa",
    "Petrov",
    "Keller",
    "Byrne",
    "Yilmaz",
    "Dahl",
    "Mendes",
    "Larsen",
    "Varga",
    "Quinn",
)
TITLES = {
    "FIN": ("Accountant", "Financial Analyst", "Billing Specialist"),
    "SAL": ("Account Executive", "Sales Development Representative"),
    "SUP": ("Support Engineer", "Customer Success Manager"),
    "ENG": ("Backend Engineer", "Frontend Engineer", "Data Engineer", "QA Engineer"),
    "HR": ("Recruiter", "People Operations Coordinator"),
}
TEAM_CHANNEL = CHANNELS | {"ENG": "engineering"}
CHECKLIST = "hr/onboarding_checklist.docx"
LIMITS = {"max_turns": 25, "time_limit_s": 600}
# A mention of someone IT just added to chat (the new hire is in no lexicon of the world's people yet).
MENTION = {"regex": r"(?<![\w.@-])@(?P<value>[a-z][a-z0-9._-]*[a-z0-9])"}
CHANNEL = {"regex": r"(?<![\w&#])#(?P<value>[a-z][a-z0-9_-]*)"}


def _row_items(who: str, fields: dict, scale: int) -> list[dict]:
    first, last = fields["first_name"].lower(), fields["last_name"].lower()
    row = f"(SELECT * FROM employees WHERE lower(first_name) = '{first}' AND lower(last_name) = '{last}') e"
    out = [
        item(
            "employee-row",
            f"{who} is in the employees table (exactly once)",
            "sql.value_equals",
            {"query": f"SELECT count(*) FROM {row}", "expected": 1},
            3,
            "employee record",
        )
    ]
    weights = {
        "email": 2,
        "chat_username": 1,
        "title": 1,
        "department_id": 2,
        "manager_id": 2,
        "location": 1,
        "hire_date": 2,
        "status": 1,
    }
    for column, points in weights.items():
        expected = str(fields[column])
        out.append(
            item(
                f"employee-{column.replace('_', '-')}",
                f"{who}'s {column} is {expected}",
                "sql.value_equals",
                {"query": f"SELECT {column}::text FROM {row}", "expected": expected},
                points * scale,
                "employee record",
            )
        )
    return out


def generate(world, rng, level: int) -> Instance:
    staff, depts = people(world), departments(world)
    taken = {p["chat_username"] for p in staff.values()}
    first, last = rng.choice([(f, la) for f in FIRST for la in LAST if f"{f}.{la}".lower() not in taken])
    code = rng.choice(sorted(TITLES) if level == 1 else sorted(TEAM_CHANNEL))
    dept = next(d for d in depts.values() if d["code"] == code)
    bosses = sorted(
        {p["manager_id"] for p in staff.values() if p["manager_id"]}
        & {p["id"] for p in staff.values() if p["department_id"] == dept["id"] and p["status"] == "active"}
    )
    boss = staff[rng.choice(bosses)]
    mondays = [TODAY + dt.timedelta(days=7 * k) for k in range(1, 13)]
    holidays = {h["day"] for h in world["holidays"].dicts()}
    start = rng.choice([d for d in mondays if d not in holidays])
    user = f"{first}.{last}".lower()
    fields = {
        "first_name": first,
        "last_name": last,
        "email": f"{user}@acme-analytics.com",
        "chat_username": user,
        "title": rng.choice(TITLES[code]),
        "department_id": dept["id"],
        "manager_id": boss["id"],
        "location": rng.choice(["Berlin", "London", "Remote"]),
        "hire_date": iso(start),
        "status": "active",
    }
    name, top = f"{first} {last}", max(staff)
    insert = execute_step(
        "INSERT INTO employees (first_name, last_name, email, chat_username, title, department_id, manager_id, "
        "location, hire_date, status) VALUES ("
        + ", ".join(str(v) if isinstance(v, int) else f"'{v}'" for v in fields.values())
        + ")"
    )
    lookup = sql_step(
        f"SELECT d.id, d.name, e.id AS manager_id, e.first_name, e.last_name FROM departments d "
        f"JOIN employees e ON e.department_id = d.id WHERE d.code = '{code}'"
    )
    only = item(
        "only-one",
        "Penalty: other new employee rows were added",
        "sql.value_equals",
        {
            "query": f"SELECT count(*) FROM employees WHERE id > {top} AND lower(chat_username) <> '{user}'",
            "expected": 0,
        },
        -3,
        "penalties",
        reason="A penalty: it holds until another employee is added.",
    )
    hired = {"allow": [{"table": "employees", "may": ["add"], "at_most": 1}]}  # the new hire's row
    day = f"{start.strftime('%A')} {start.day} {MONTHS[start.month - 1]}"
    where = {"Remote": "remotely", "Berlin": "from our Berlin office", "London": "from our London office"}
    if level == 1:
        return Instance(
            prompt=(
                f"Please add our new hire to the employee table: {name}, {fields['title']} in {dept['name']}, "
                f"reporting to {full_name(boss)}, working {where[fields['location']]}, first day {iso(start)}. Use "
                f"the usual e-mail and chat username conventions (see /workspace/{CHECKLIST})."
            ),
            rubric_items=[*_row_items(name, fields, 1), only],
            solution=[
                {"tool": "office.read_document", "args": {"path": CHECKLIST}},
                lookup,
                insert,
                {"answer": f"Added {name} ({fields['email']})."},
            ],
            damage=hired,
            apps=["db", "office"],
            limits=LIMITS_L1,
        )
    hr, team = head_of(world, "HR"), TEAM_CHANNEL[code]
    announcement = (
        f"Please welcome **{name}**, who joins {dept['name']} as a **{fields['title']}** on **{day}**, reporting to "
        f"@{boss['chat_username']}. {first} will work {where[fields['location']]}. IT has set up the chat account "
        f"(@{user}). Ops, please do the usual onboarding steps."
    )
    return Instance(
        prompt=(
            f"{hr['first_name']} announced a new hire, {name}, in #general this morning. Please do the operations "
            "part of the onboarding, following the onboarding checklist in /workspace/hr/."
        ),
        chat={
            "users": [
                {
                    "username": user,
                    "first_name": first,
                    "last_name": last,
                    "email": fields["email"],
                    "position": fields["title"],
                }
            ],
            "posts": [post("general", hr["chat_username"], announcement)],
        },
        rubric_items=[
            *_row_items(name, fields, 1),
            *[
                item(
                    f"member-{c}",
                    f"@{user} was added to #{c}",
                    "chat.channel_member",
                    {"channel": c, "user": user},
                    2,
                    "chat",
                )
                for c in ("general", team)
            ],
            # The welcome's role, start date and manager are claims: another one is a wrong value.
            stated("welcome", f"A welcome in #{team} mentions @{user}", "mention", user, 3, where=f"#{team}"),
            stated(
                "welcome-role",
                f"The welcome gives the role {fields['title']}",
                "role",
                fields["title"],
                1,
                where=f"#{team}",
            ),
            stated(
                "welcome-start",
                f"The welcome gives the start date {iso(start)}",
                "date",
                iso(start),
                1,
                where=f"#{team}",
            ),
            stated(
                "welcome-manager",
                f"The welcome names the manager {full_name(boss)}",
                "colleague",
                full_name(boss),
                1,
                where=f"#{team}",
            ),
            # The confirmation says what was done: which team channel the new hire is in.
            stated(
                "told-hr",
                f"You confirmed to {full_name(hr)} by direct message, naming #{team}",
                "channel",
                team,
                2,
                where=dm(hr["chat_username"]),
            ),
            item(
                "no-private-channels",
                f"Penalty: @{user} was added to #leadership",
                "chat.channel_member",
                {"channel": "leadership", "user": user},
                -3,
                "penalties",
                negate=True,
                reason="A penalty: it holds unless the new hire is added to #leadership.",
            ),
            only,
        ],
        solution=[
            {"tool": "chat.read_channel", "args": {"channel": "general", "limit": 5}},
            {"tool": "office.read_document", "args": {"path": CHECKLIST}},
            lookup,
            insert,
            *[
                {"tool": "chat.add_channel_member", "args": {"channel": c, "username": u}}
                # the agent joins #engineering first: only a channel's members may add people to it
                for c, u in [("general", user)] + ([(team, AGENT)] if code == "ENG" else []) + [(team, user)]
            ],
            post_step(
                team,
                f"Please welcome @{user}! {first} joins us as {fields['title']} on {day} ({iso(start)}), "
                f"working {where[fields['location']]} and reporting to @{boss['chat_username']} "
                f"({boss['first_name']}). Welcome to Acme, {first}!",
            ),
            dm_step(
                hr["chat_username"],
                f"Hi {hr['first_name']}, the ops onboarding for {name} is done: employee "
                f"record created, chat account added to #general and #{team}, welcome posted in #{team}.",
            ),
            {
                "answer": f"{name} is in the employee table, in #general and #{team}, welcomed, and {hr['first_name']} has been told."
            },
        ],
        claims={
            "mention": MENTION,
            "channel": CHANNEL,
            "role": {
                "values": sorted(
                    {p["title"] for p in staff.values()} | {t for ts in TITLES.values() for t in ts}
                )
            },
            # By full name, first name or @username; the new hire's first name is someone else's here.
            "colleague": colleagues(world, skip_first=(first,)),
        },
        damage=hired,
        apps=["db", "chat", "office"],
        limits=LIMITS,
    )
