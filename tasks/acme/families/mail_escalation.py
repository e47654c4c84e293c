"""A customer complaint escalated. An angry customer e-mails about an open support ticket; the agent
looks the ticket up, files the mail in its Escalations folder and escalates in #support with the
ticket number, the customer, the ticket's assignee and its current priority.

Level 0: the mail quotes the ticket number.
Level 1: it does not: the sender's address is a customer contact, and their customer has exactly one
open ticket (other customers' tickets share its subject). The agent also replies to the customer,
quoting the ticket number (who works it and its priority stay internal).
"""

from __future__ import annotations

import datetime as dt

from families._common import LIMITS_L1, LIMITS_L2, by_id, full_name, item, post_step, quoted, sql_step, stated
from families._people import colleagues
from families._support import OPEN, agents, ticket_rows_sql
from gym.families import Instance

TITLE = "A customer complaint escalated"
LEVELS = (0, 1)
SPLIT = "train"
AGENT = "jordan.lee@acme-analytics.com"
DOMAIN = "acme-analytics.com"
FOLDER = "Escalations"
# A ticket number as written next to what it is ("ticket 42", "Ticket: #42", "#42", "ticket no. 42"), so the
# other numbers of a post (a date, a count of days) are no ticket numbers.
TICKET = {
    "regex": r"(?:#|\b(?:tickets?|id)\b[\s:#.]*(?:no\.?|number|id)?[\s:#.]*)(?P<value>\d{1,4})(?![\w]|[.,:/-]?\d)"
}
SUBJECTS = ["Still waiting: {subject}", "Complaint: {subject}", "Unacceptable delay - {subject}"]
OPENERS = [
    "I am writing again about {ticket}. It has been dragging on since {since} and nobody has fixed it.",
    "{ticket} has been open since {since}, and we are still stuck. Frankly, this is not the service we pay for.",
    "Since {since} we have been waiting on {ticket}. Our team cannot work properly until it is sorted out.",
]


def _complaint(rng, ticket: dict, contact: dict, quote_number: bool) -> tuple[str, str]:
    what = (
        f"ticket #{ticket['id']} ({ticket['subject']})"
        if quote_number
        else f'our issue "{ticket["subject"]}"'
    )
    since = f"{ticket['created_at']:%d %B}".lstrip("0")
    opener = rng.choice(OPENERS).format(ticket=what, since=since)
    body = (
        f"Hello,\n\n{opener[0].upper()}{opener[1:]} This is urgent for us: I expect a proper answer today, "
        f"or I will take it to our account manager.\n\n{contact['name']}"
    )
    return rng.choice(SUBJECTS).format(subject=ticket["subject"]), body


def _ticket(world, rng, level: int) -> tuple[dict, dict, str]:
    """The complaining contact, their ticket, and the overlay SQL adding it when their customer has no open
    one. Level 1 draws only from customers with at most one open ticket, so the one it has is the one."""
    tickets = world["support_tickets"].dicts()
    mine: dict[int, list[dict]] = {}
    for t in sorted(tickets, key=lambda t: t["id"]):
        if t["status"] in OPEN:
            mine.setdefault(t["customer_id"], []).append(t)
    pool = [c["id"] for c in world["customers"].dicts() if c["status"] == "active"]
    customer = rng.choice([c for c in pool if level == 0 or len(mine.get(c, [])) <= 1])
    contacts = sorted(
        (c for c in world["contacts"].dicts() if c["customer_id"] == customer), key=lambda c: c["id"]
    )
    contact = rng.choice(contacts)
    if mine.get(customer):
        return contact, rng.choice(mine[customer]), ""
    created = dt.datetime(2025, 4, rng.randint(4, 6), rng.randint(8, 17), rng.randint(0, 59))  # the newest
    ticket = {
        "id": max(t["id"] for t in tickets) + rng.randint(1, 25),  # a few were spam, deleted
        "customer_id": customer,
        "contact_id": contact["id"],
        "subject": rng.choice(sorted({t["subject"] for t in tickets})),  # other customers' tickets share it
        "description": "",
        "priority": rng.choice(["low", "normal", "high"]),
        "status": "open",
        "assignee_id": rng.choice(agents(world))["id"],
        "source": "email",
        "created_at": created,
        "first_response_at": created + dt.timedelta(hours=rng.randint(1, 7)),
        "resolved_at": None,
    }
    return contact, ticket, ticket_rows_sql([ticket])


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    customers = by_id(world, "customers")
    tickets = world["support_tickets"].dicts()
    contact, ticket, sql = _ticket(world, rng, level)
    customer = customers[ticket["customer_id"]]
    assignee = full_name(people[ticket["assignee_id"]])
    subject, body = _complaint(rng, ticket, contact, quote_number=level == 0)
    # An earlier escalation, long settled, already sits in the folder: another customer's.
    old = rng.choice([t for t in tickets if t["status"] == "closed" and t["customer_id"] != customer["id"]])
    old_contact = next(c for c in world["contacts"].dicts() if c["id"] == old["contact_id"])
    colleague = people[rng.choice(sorted(set(people) - {3, ticket["assignee_id"]}))]
    messages = [
        {
            "account": AGENT,
            "from": contact["email"],
            "to": [AGENT],
            "subject": subject,
            "date": dt.datetime(2025, 4, 7, 8, rng.randint(2, 55), tzinfo=dt.UTC),
            "seen": False,
            "body": body,
        },
        {
            "account": AGENT,
            "from": colleague["email"],
            "to": [AGENT],
            "subject": "Team lunch on Thursday",
            "date": dt.datetime(2025, 4, 4, 12, 5, tzinfo=dt.UTC),
            "body": "Anyone up for the Italian place on Thursday? 12:30.",
        },
        {
            "account": AGENT,
            "folder": FOLDER,
            "from": old_contact["email"],
            "to": [AGENT],
            "subject": f"Complaint: {old['subject']}",
            "date": old["created_at"].replace(tzinfo=dt.UTC) + dt.timedelta(hours=2),
            "body": _complaint(rng, old, old_contact, quote_number=True)[1],
        },
    ]
    mail = {
        "domains": [DOMAIN],
        "accounts": [
            {"address": AGENT, "name": "Jordan Lee", "agent": True},
            {"address": colleague["email"], "name": full_name(colleague)},
        ],
        "messages": messages,
    }
    support = "#support"
    to_customer = f"mail:{contact['email']}"
    # Filing earns little: moving every message there (the complaint among them) must not pay.
    points = {"filed": 1, "customer": 1} if level == 0 else {"filed": 1, "customer": 2}
    items = [
        item(
            "filed",
            f"The complaint from {contact['email']} is filed in {FOLDER}",
            "mail.filed",
            {"account": AGENT, "folder": FOLDER, "sender": contact["email"]},
            points["filed"],
            "mail",
        ),
        stated(
            "ticket",
            f"#support hears of ticket {ticket['id']}",
            "ticket",
            str(ticket["id"]),
            2,
            where=support,
        ),
        stated(
            "customer",
            f"The post names {customer['name']}",
            "customer",
            customer["name"],
            points["customer"],
            where=support,
        ),
        stated("assignee", f"The post says {assignee} has it", "assignee", assignee, 2, where=support),
        stated(
            "priority",
            f"The post gives its priority, {ticket['priority']}",
            "priority",
            ticket["priority"],
            2,
            where=support,
        ),
    ]
    if level == 1:
        items.append(
            stated(
                "reply",
                f"The reply to the customer quotes ticket {ticket['id']}",
                "ticket",
                str(ticket["id"]),
                3,
                where=to_customer,
            )
        )
    items.append(
        item(
            "nothing-outside",
            "Penalty: mail went to an outside address other than the customer's",
            "mail.nothing_sent_outside",
            {"allow": [contact["email"]]},
            -2,
            "mail",
            reason="A penalty: it holds until the agent mails someone outside the company.",
        )
    )
    columns = "t.id, t.subject, t.status, t.priority, e.first_name || ' ' || e.last_name AS assignee"
    if level == 0:
        lookup = [
            sql_step(
                f"SELECT {columns}, c.name AS customer FROM support_tickets t JOIN customers c ON c.id = t.customer_id "
                f"LEFT JOIN employees e ON e.id = t.assignee_id WHERE t.id = {ticket['id']}"
            )
        ]
    else:
        lookup = [
            sql_step(
                "SELECT c.name AS customer, ct.name FROM contacts ct JOIN customers c ON c.id = ct.customer_id "
                f"WHERE ct.email = {quoted(contact['email'])}"
            ),
            sql_step(
                f"SELECT {columns} FROM support_tickets t LEFT JOIN employees e ON e.id = t.assignee_id "
                "WHERE t.customer_id = (SELECT customer_id FROM contacts WHERE email = "
                f"{quoted(contact['email'])}) AND t.status IN ({', '.join(map(quoted, OPEN))})"
            ),
        ]
    reply = (
        f"Hello {contact['name'].split()[0]},\n\nI am sorry for the wait. Your ticket {ticket['id']} "
        f"({ticket['subject']}) is now escalated with our support team, who will get back to you shortly."
        "\n\nBest regards,\nJordan Lee"
    )
    ask = (
        "It quotes the ticket number."
        if level == 0
        else (
            "It gives no ticket number: the sender is one of our customer contacts, so find their customer's open ticket."
        )
    )
    return Instance(
        prompt=(
            f"An upset customer just e-mailed me about a support ticket. {ask} Please file their mail in my {FOLDER} "
            "mail folder and escalate in #support: the ticket number, the customer, who the ticket is assigned to and "
            "its current priority."
            + (
                " Then reply to the customer that it is escalated, quoting their ticket number (who works on it "
                "and its priority stay internal)."
                if level == 1
                else ""
            )
        ),
        rubric_items=items,
        claims={
            "ticket": TICKET,
            "assignee": colleagues(world, allow=["Jordan Lee"]),  # signing one's own name claims nothing
            # Greeting the customer by name in a reply is no claim about the ticket.
            "customer": {
                "values": sorted(c["name"] for c in customers.values()),
                "allow": [customer["name"]],
            },
        },
        solution=[
            {"tool": "mail.read_message", "args": {"message": "INBOX/1"}},
            *lookup,
            post_step(
                "support",
                f"Escalation: {customer['name']} is unhappy about ticket {ticket['id']} ({ticket['subject']}), still "
                f"{ticket['status']}. Assigned to {assignee}, priority {ticket['priority']}. Can we get it moving today?",
            ),
            *([{"tool": "mail.reply", "args": {"message": "INBOX/1", "body": reply}}] if level == 1 else []),
            {"tool": "mail.move_message", "args": {"message": "INBOX/1", "folder": FOLDER}},
            {"answer": f"Filed the complaint in {FOLDER} and escalated ticket {ticket['id']} in #support."},
        ],
        apps=["db", "mail", "chat"],
        mail=mail,
        sql=sql,
        limits=LIMITS_L1 if level == 0 else LIMITS_L2,
        damage={
            "allow": [{"mail": AGENT, "may": ["change"], "at_most": 1}]
        },  # filing the complaint, and no more
    )
