"""The staff directory. Level 0: someone's e-mail or chat username; level 1: everyone whose title contains a word (optionally in one office); level 2: a directory spreadsheet sorted by last name, shared in chat."""

from __future__ import annotations

import re

from families._common import LIMITS_L0, LIMITS_L1, full_name, item, quoted, sql_step, stated
from families._people import CHANNELS, OFFICE, active, departments, people, usernames
from gym.families import Instance

TITLE = "Look people up in the staff directory"
LEVELS = (0, 1, 2)
SPLIT = "train"
OFFICES = ("Berlin", "London", "Remote")
HEADER = ["Name", "Title", "Email", "Location"]
LIMITS = {"max_turns": 20, "time_limit_s": 600}


def _scopes(world) -> list[tuple]:
    """(department id or None, office or None) with at least two active people."""
    current, out = active(world), []
    for d in [None, *sorted(departments(world))]:
        for o in (None, *OFFICES):
            n = sum(d in (None, p["department_id"]) and o in (None, p["location"]) for p in current)
            if (d or o) and 2 <= n <= 15:
                out.append((d, o))
    return out


def generate(world, rng, level: int) -> Instance:
    staff, depts, current = people(world), departments(world), active(world)
    if level == 0:
        person, field = rng.choice(current), rng.choice(["email", "chat_username"])
        what = {"email": "e-mail address", "chat_username": "chat username"}[field]
        kind = {"email": "email", "chat_username": "username"}[field]
        return Instance(
            prompt=f"What is {full_name(person)}'s {what}?",
            rubric_items=[stated(field, f"The answer gives {person[field]}", kind, person[field])],
            claims={"username": usernames(world)} if kind == "username" else {},
            solution=[
                sql_step(
                    f"SELECT email, chat_username FROM employees WHERE first_name = {quoted(person['first_name'])} "
                    f"AND last_name = {quoted(person['last_name'])}"
                ),
                {"answer": f"{full_name(person)}'s {what} is {person[field]}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    if level == 1:
        words = sorted({w for p in current for w in re.findall(r"[A-Za-z]{4,}", p["title"])})
        choices = []
        for w in words:  # a word that reads the same as a substring and as a whole word ('Engineer' does not)
            sub = [p for p in current if w.lower() in p["title"].lower()]
            if sub != [p for p in current if re.search(rf"\b{w}\b", p["title"], re.I)]:
                continue
            for o in (None, *OFFICES):
                found = [p for p in sub if o in (None, p["location"])]
                if 2 <= len(found) <= 8 and (o is None or len(found) < len(sub)):
                    choices.append((w, o, found))
        word, office, found = rng.choice(choices)
        where = (
            f" in the {office} office"
            if office in ("Berlin", "London")
            else " working remotely"
            if office
            else ""
        )
        return Instance(
            prompt=f"Which active employees{where} have '{word}' in their job title? Give their full names.",
            rubric_items=[
                stated(f"person-{p['id']}", f"The answer names {full_name(p)}", "employee", full_name(p), 1)
                for p in found
            ],
            solution=[
                sql_step(
                    "SELECT first_name, last_name, title, location FROM employees WHERE status = 'active' "
                    f"AND title ILIKE '%{word}%'" + (f" AND location = '{office}'" if office else "")
                ),
                {"answer": ", ".join(full_name(p) for p in found) + "."},
            ],
            apps=["db"],
            limits=LIMITS_L1,
        )
    d, office = rng.choice(_scopes(world))
    dept = depts.get(d)
    found = sorted(
        (p for p in current if d in (None, p["department_id"]) and office in (None, p["location"])),
        key=lambda p: p["last_name"],
    )
    place = {"Berlin": "at the Berlin office", "London": "at the London office", "Remote": "working remotely"}
    scope = " ".join(
        filter(None, [f"the {dept['name']} department" if dept else "everyone", place.get(office)])
    )
    slug = "_".join(filter(None, [dept and dept["code"].lower(), office and office.lower()]))
    path = f"reports/{slug}_directory.xlsx"
    channel = CHANNELS.get(dept["code"], "general") if dept else "general"
    extra = rng.choice([None, "Manager", "Chat username"])

    def cells(p) -> list[str]:
        boss = staff.get(p["manager_id"])
        more = {None: [], "Manager": [full_name(boss) if boss else ""], "Chat username": [p["chat_username"]]}
        return [full_name(p), p["title"], p["email"], p["location"], *more[extra]]

    def row(p) -> list[dict]:
        """A row's values are claims about its e-mail (the row's key): on someone else's row, or on a row
        for someone who does not belong in the sheet, they are wrong (grader.claims)."""
        boss, at = staff.get(p["manager_id"]), {"where": f"file:{path}", "about": p["email"]}
        out = [
            stated(
                f"name-{p['id']}",
                f"The row of {p['email']} names {full_name(p)}",
                "employee",
                full_name(p),
                1,
                **at,
            ),
            stated(
                f"title-{p['id']}", f"{full_name(p)}'s title is {p['title']}", "title", p["title"], 1, **at
            ),
        ]
        if not office:  # the office the directory is of is in the prompt
            out.append(
                stated(
                    f"office-{p['id']}",
                    f"{full_name(p)} works from {p['location']}",
                    "office",
                    p["location"],
                    1,
                    **at,
                )
            )
        if extra == "Manager" and boss:
            out.append(
                stated(
                    f"manager-{p['id']}",
                    f"{full_name(p)}'s manager is {full_name(boss)}",
                    "employee",
                    full_name(boss),
                    1,
                    **at,
                )
            )
        if extra == "Chat username":
            out.append(
                stated(
                    f"username-{p['id']}",
                    f"{full_name(p)}'s chat username is {p['chat_username']}",
                    "username",
                    p["chat_username"],
                    1,
                    **at,
                )
            )
        return out

    rows = [HEADER + ([extra] if extra else [])] + [cells(p) for p in found]
    return Instance(
        prompt=(
            f"Please build a staff directory of {scope} as /workspace/{path}: a header row Name, Title, Email, "
            f"Location{', ' + extra if extra else ''}{' (their manager' + chr(39) + 's full name)' if extra == 'Manager' else ''}, then one row per active employee, sorted by last name. Then share the file in "
            f"#{channel}."
        ),
        rubric_items=[
            *[claim for p in found for claim in row(p)],
            item(
                "sorted",
                "Rows are sorted by last name",
                "rows_in_order",
                {"path": path, "keys": [p["email"] for p in found]},
                2,
                "spreadsheet",
            ),
            item(
                "shared",
                f"The file was shared in #{channel}",
                "shared_file",
                {"channel": channel, "name": path.rsplit("/", 1)[1]},
                3,
                "chat",
            ),
        ],
        solution=[
            sql_step(
                "SELECT first_name || ' ' || last_name AS name, title, email, location FROM employees "
                "WHERE status = 'active'"
                + (f" AND department_id = {d}" if d else "")
                + (f" AND location = '{office}'" if office else "")
                + " ORDER BY last_name"
            ),
            {"tool": "office.create_document", "args": {"path": path}},
            {"tool": "office.write_cells", "args": {"path": path, "start_cell": "A1", "rows": rows}},
            {
                "tool": "chat.attach_file",
                "args": {
                    "channel": channel,
                    "path": path,
                    "message": f"Here is the staff directory of {scope} ({len(found)} people).",
                },
            },
            {
                "answer": f"Built {path} ({len(found)} people, sorted by last name) and shared it in #{channel}."
            },
        ],
        claims={"office": OFFICE, "username": usernames(world)},
        apps=["db", "chat", "office"],
        limits=LIMITS,
    )
