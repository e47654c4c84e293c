"""Ticket assignment. Level 0: who has ticket N; level 1: assign a new unassigned ticket to a named engineer
and open it; level 2: triage a weekend queue posted in #support into tickets (priority by the playbook,
the covering engineer, the caller as contact) and reply with the ticket numbers."""

from __future__ import annotations

import datetime as dt

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    execute_step,
    full_name,
    post_step,
    quoted,
    sql_step,
    state,
    stated,
)
from families._finance import slug
from families._support import TICKET, agents, post, ticket_rows_sql
from gym.families import Instance

TITLE = "Assign and triage support tickets"
LEVELS = (0, 1, 2)
SPLIT = "train"
TODAY = dt.datetime(2025, 4, 7, 7, 0)
SUBJECTS = (
    "Dashboard export times out",
    "Cannot add a new user seat",
    "Scheduled report arrives empty",
    "Single sign-on login loop",
    "Data connector stopped syncing",
    "Filter settings lost after logout",
    "Wrong currency in forecast view",
    "Alert e-mails arrive twice",
)
# What a caller says, by the playbook priority it calls for, with a ticket subject.
REQUESTS = {
    "urgent": (
        (
            "All dashboards down",
            "nothing loads for any of their users since Sunday 07:00, every dashboard is blank, and they have no workaround",
        ),
        (
            "Tenant login down",
            "no user at all can log in since Saturday night; the whole company is locked out, no workaround",
        ),
        (
            "All report data lost after sync",
            "since last night's sync all their reports are empty for every user, and nothing they tried brings the data back",
        ),
    ),
    "high": (
        (
            "Forecast totals wrong before board meeting",
            "the forecast module shows wrong totals for most of their users and they present to their board tomorrow; no workaround",
        ),
        (
            "Scheduled reports stopped",
            "scheduled reports stopped going out to all their regional managers and their quarter closes this week; they found no workaround",
        ),
        (
            "SAP connector failing for finance team",
            "the SAP connector fails for their whole finance team since the update, month-end close depends on it, no workaround",
        ),
    ),
    "normal": (
        (
            "CSV import skips rows",
            "the CSV import skips a few rows; splitting the file into smaller parts works for now",
        ),
        (
            "Wrong time zone for two users",
            "two users see the wrong time zone in the report header; setting the time zone in their profile works around it",
        ),
        (
            "Excel export times out on one dashboard",
            "the Excel export times out for one large dashboard; exporting to CSV works instead",
        ),
    ),
    "low": (
        (
            "How to share a dashboard externally",
            "they ask how to share a dashboard with their external auditor",
        ),
        ("Feature request: dark mode", "they would like a dark mode (a feature request)"),
        ("Typo in German UI", "cosmetic: there is a typo in the German UI on the settings page"),
    ),
}
SEEDED_QUEUE = {
    "Tessera Bank",
    "Brightline Retail",
    "Quantum Foods",
    "Meridian Publishing",
    "Everest Telecom",
}


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    engineers = agents(world)
    if level == 0:
        ticket = rng.choice(world["support_tickets"].dicts())
        who = people[ticket["assignee_id"]]
        return Instance(
            prompt=f"Which support engineer is support ticket {ticket['id']} assigned to?",
            rubric_items=[
                stated("assignee", f"The answer names {full_name(who)}", "employee", full_name(who))
            ],
            solution=[
                sql_step(
                    "SELECT t.id, e.first_name, e.last_name FROM support_tickets t JOIN employees e ON e.id = t.assignee_id "
                    f"WHERE t.id = {ticket['id']}"
                ),
                {"answer": f"Ticket {ticket['id']} is assigned to {full_name(who)}."},
            ],
            apps=["db"],
            limits=LIMITS_L0,
        )
    customers = [
        c for c in world["customers"].dicts() if c["status"] == "active" and c["name"] not in SEEDED_QUEUE
    ]
    contacts = {}
    for c in world["contacts"].dicts():
        contacts.setdefault(c["customer_id"], []).append(c)
    if level == 2:
        return _triage(rng, people, engineers, [c for c in customers if c["id"] in contacts], contacts)
    picked = rng.sample(customers, rng.randint(2, 4))
    rows = [
        {
            "id": 306 + i,
            "customer_id": c["id"],
            "contact_id": None,
            "subject": s,
            "description": "",
            "priority": "normal",
            "status": "new",
            "assignee_id": None,
            "source": "portal",
            "created_at": TODAY + dt.timedelta(minutes=13 * i + 4),
        }
        for i, (c, s) in enumerate(zip(picked, rng.sample(SUBJECTS, len(picked)), strict=True))
    ]
    ticket = rng.choice(rows)
    to = rng.choice(engineers)
    customer = next(c for c in picked if c["id"] == ticket["customer_id"])
    return Instance(
        prompt=(
            f'Ticket {ticket["id"]} ("{ticket["subject"]}" from {customer["name"]}) came in through the portal this '
            f"morning and nobody has it yet. Assign it to {full_name(to)} and set its status to open."
        ),
        sql=ticket_rows_sql(rows),
        rubric_items=[
            state(
                "assignee",
                f"Ticket {ticket['id']} is assigned to {full_name(to)}",
                f"SELECT assignee_id FROM support_tickets WHERE id = {ticket['id']}",
                to["id"],
            ),
            state(
                "open",
                f"Ticket {ticket['id']} is open",
                f"SELECT status FROM support_tickets WHERE id = {ticket['id']}",
                "open",
                2,
            ),
        ],
        solution=[
            sql_step(
                f"SELECT id, first_name, last_name FROM employees WHERE first_name || ' ' || last_name = {quoted(full_name(to))}"
            ),
            execute_step(
                f"UPDATE support_tickets SET assignee_id = {to['id']}, status = 'open' WHERE id = {ticket['id']}"
            ),
            {"answer": f"Ticket {ticket['id']} is now open and assigned to {full_name(to)}."},
        ],
        damage={"allow": [{"table": "support_tickets", "columns": ["assignee_id", "status"], "at_most": 1}]},
        apps=["db"],
        limits=LIMITS_L1,
    )


def _triage(rng, people, engineers, customers, contacts) -> Instance:
    n = rng.randint(3, 5)
    picked = rng.sample(customers, n)
    priorities = rng.sample(list(REQUESTS), min(n, 4)) + rng.choices(list(REQUESTS), k=max(0, n - 4))
    source, how = rng.choice([("email", "e-mails to support@"), ("chat", "chat-widget requests")])
    asker = rng.choice([p for p in people.values() if p["chat_username"] in ("priya.sharma", "jonas.weber")])
    cover = rng.choice([e for e in engineers if e["chat_username"] != "lena.vogel"])
    requests = []
    for customer, priority in zip(picked, priorities, strict=True):
        subject, text = rng.choice(REQUESTS[priority])
        requests.append((customer, rng.choice(contacts[customer["id"]]), priority, subject, text))
    lines = [f"{i}. {k['name']} ({c['name']}): {text}." for i, (c, k, _, _, text) in enumerate(requests, 1)]
    message = (
        f"Weekend {how} - could someone log these as tickets please?\n"
        + "\n".join(lines)
        + f"\nLena is on site at Tessera today, so @{cover['chat_username']} covers these."
    )
    base = "SELECT count(*) FROM support_tickets t WHERE t.id > 305 AND t.customer_id = {c}"
    items = [
        state(
            "exactly", f"Exactly {n} new tickets", "SELECT count(*) FROM support_tickets WHERE id > 305", n, 2
        )
    ]
    for c, k, priority, _, _ in requests:
        key = slug(c["name"])
        q = base.format(c=c["id"])
        items += [
            state(f"logged-{key}", f"One new ticket for {c['name']}", q, 1, 2),
            state(
                f"priority-{key}",
                f"{c['name']}'s ticket is {priority} (playbook)",
                f"{q} AND t.priority = '{priority}'",
                1,
                3,
            ),
            state(
                f"contact-{key}",
                f"{c['name']}'s ticket is linked to {k['name']}",
                f"{q} AND t.contact_id = {k['id']}",
                1,
                1,
            ),
            state(
                f"assignee-{key}",
                f"{c['name']}'s ticket goes to {full_name(cover)}",
                f"{q} AND t.assignee_id = {cover['id']}",
                1,
                1,
            ),
            state(
                f"fields-{key}",
                f"{c['name']}'s ticket is new, from {source}",
                f"{q} AND t.status = 'new' AND t.source = '{source}'",
                1,
                1,
            ),
        ]
    # The new tickets take the ids after the seeded 305 (the sequence is past them); another number is wrong.
    items += [
        stated(
            f"reply-{305 + i}",
            f"Ticket {305 + i} is posted in #support",
            "ticket",
            str(305 + i),
            1,
            where="#support",
        )
        for i in range(1, n + 1)
    ]
    values = ",\n".join(
        f"({i}, {c['id']}, {k['id']}, {quoted(s)}, {quoted(t[0].upper() + t[1:] + '.')}, '{p}')"
        for i, (c, k, p, s, t) in enumerate(requests, 1)
    )
    insert = (
        "INSERT INTO support_tickets (customer_id, contact_id, subject, description, priority, status, assignee_id, source, created_at)\n"
        f"SELECT v.customer_id, v.contact_id, v.subject, v.description, v.priority, 'new', {cover['id']}, '{source}', TIMESTAMP '2025-04-07 09:00'\n"
        f"FROM (VALUES\n{values}\n) AS v(n, customer_id, contact_id, subject, description, priority) ORDER BY v.n RETURNING id, customer_id, priority"
    )
    reply = "\n".join(f"- #{305 + i} {c['name']}: {s} ({p})" for i, (c, _, p, s, _) in enumerate(requests, 1))
    return Instance(
        prompt=(
            f"{asker['first_name']} posted the weekend's {how} in #support this morning. Please log them in the ticket "
            "system the way our support playbook says, and reply in #support with the new ticket numbers."
        ),
        chat={"posts": [post("support", asker["chat_username"], message)]},
        rubric_items=items,
        solution=[
            {"tool": "chat.read_channel", "args": {"channel": "support", "limit": 5}},
            {"tool": "office.read_document", "args": {"path": "support/support_playbook.odt"}},
            sql_step(
                "SELECT c.id, c.name, k.id AS contact_id, k.name AS contact FROM customers c JOIN contacts k ON k.customer_id = c.id "
                f"WHERE c.name IN ({', '.join(quoted(c['name']) for c, *_ in requests)}) ORDER BY c.name"
            ),
            execute_step(insert),
            post_step(
                "support",
                f"@{asker['chat_username']} the weekend {how} are logged (source {source}, status new, assigned to @{cover['chat_username']}):\n{reply}",
            ),
            {
                "answer": "Logged the requests as tickets "
                + ", ".join(str(305 + i) for i in range(1, n + 1))
                + " and posted the numbers in #support."
            },
        ],
        claims={"ticket": TICKET},
        damage={"allow": [{"table": "support_tickets", "may": ["add"], "at_most": n}]},
        apps=["db", "chat", "office"],
        limits=LIMITS_L2,
    )
