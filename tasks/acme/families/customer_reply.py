"""Answering about a customer. Level 1: a coworker asks in a channel how many open tickets a customer has
(reply there); level 2: a customer asks what is still open on an invoice: check the records, draft the
reply as a .docx and tell the coworker in their channel."""

from __future__ import annotations

from collections import defaultdict

from families._common import (
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    full_name,
    post_step,
    quoted,
    sql_step,
    stated,
)
from families._finance import eur, paid_by_invoice, slug
from families._support import OPEN, post
from gym.families import Instance

TITLE = "Answer a question about a customer"
LEVELS = (1, 2)
SPLIT = "train"
TICKETS = r"open (support )?tickets?|tickets? (are |still )?open|unresolved tickets?"
ASK = (
    "@jordan.lee quick one: how many open support tickets (new, open or pending) does {c} have right now? I have a call with them at 11.",
    "Hi @jordan.lee, before I meet {c} this afternoon: how many unresolved tickets (status new, open or pending) do they have with us?",
    "@jordan.lee could you check how many tickets {c} currently has open (new, open or pending)? Want to know before I call them.",
)
# A letter saying that nothing is left to pay, in words (there is no amount to state).
SETTLED = {
    "values": [
        {
            "value": "paid in full",
            "regex": r"paid in full|fully paid|fully settled|nothing (is )?(left |still )?(open|outstanding|due|owed)|no (open |outstanding )?(amount|balance)",
        }
    ]
}


def generate(world, rng, level: int) -> Instance:
    people, customers = by_id(world, "employees"), by_id(world, "customers")
    if level == 2:
        return _invoice_reply(world, rng, people, customers)
    tickets = defaultdict(list)
    for t in world["support_tickets"].dicts():
        tickets[t["customer_id"]].append(t)
    busy = sorted(c for c, ts in tickets.items() if any(t["status"] in OPEN for t in ts))
    customer = customers[rng.choice(busy if rng.random() < 0.75 else sorted(customers))]
    n = sum(t["status"] in OPEN for t in tickets[customer["id"]])
    manager = people[customer["account_manager_id"]]
    channel, asker = rng.choice([("sales", manager), ("support", people[29]), ("support", people[22])])
    # A count with resolved or closed tickets, or of status open alone, is a wrong one (grader.claims).
    return Instance(
        prompt=f"{full_name(asker)} asked you a question in #{channel}. Please answer it there.",
        chat={"posts": [post(channel, asker["chat_username"], rng.choice(ASK).format(c=customer["name"]))]},
        rubric_items=[
            stated(
                "count",
                f"The reply in #{channel} gives {n} open tickets",
                "open_tickets",
                n,
                3,
                where=f"#{channel}",
            )
        ],
        claims={"open_tickets": count_kind(TICKETS)},
        solution=[
            {"tool": "chat.read_channel", "args": {"channel": channel, "limit": 5}},
            sql_step(
                "SELECT t.status, count(*) FROM support_tickets t JOIN customers c ON c.id = t.customer_id "
                f"WHERE c.name = {quoted(customer['name'])} GROUP BY t.status"
            ),
            post_step(
                channel,
                f"@{asker['chat_username']} {customer['name']} has {n} open tickets (new, open or pending) right now.",
            ),
            {"answer": f"Told {asker['first_name']} in #{channel}: {customer['name']} has {n} open tickets."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L1,
    )


def _invoice_reply(world, rng, people, customers) -> Instance:
    paid = paid_by_invoice(world)
    primary = {c["customer_id"]: c for c in world["contacts"].dicts() if c["is_primary"]}
    invoice = rng.choice(
        [i for i in world["invoices"].dicts() if i["status"] in ("sent", "partially_paid", "paid")]
    )
    customer, contact = customers[invoice["customer_id"]], primary[invoice["customer_id"]]
    number, total, got = invoice["number"], invoice["total"], paid[invoice["id"]]
    owed = total - got
    manager = people[customer["account_manager_id"]]
    channel, asker = rng.choice([("sales", manager), ("support", people[29])])
    path = f"drafts/{slug(customer['name'])}_{number.lower()}_reply.docx"
    draft = f"file:{path}"
    message = (
        f"{contact['name']} ({contact['role']} at {customer['name']}) wrote to me about a payment reminder for invoice "
        f"{number}: what exactly is still open on it, and when was it due? @jordan.lee could you check what we have on "
        "record and draft a reply I can send?"
    )
    # The draft's amounts, dates and names are claims: another invoice's figures, or a date that is not the
    # due date, are wrong ones; the coworker is told which draft is ready (the invoice and the contact).
    items = [
        stated(
            "draft", f"The draft is a letter to {contact['name']}", "contact", contact["name"], 2, where=draft
        ),
        stated("invoice", f"The draft names invoice {number}", "invoice", number, 2, where=draft),
        stated("total", f"The draft gives the invoice total {eur(total)}", "amount", total, 1, where=draft),
        stated(
            "due",
            f"The draft gives the due date {invoice['due_date']}",
            "date",
            invoice["due_date"],
            1,
            where=draft,
        ),
        stated(
            "told",
            f"{asker['first_name']} is told in #{channel} that the draft for {number} is ready",
            "invoice",
            number,
            1,
            where=f"#{channel}",
        ),
        stated(
            "told-contact",
            f"The note in #{channel} names {contact['name']}",
            "contact",
            contact["name"],
            1,
            where=f"#{channel}",
        ),
    ]
    if owed:
        items.append(
            stated("owed", f"The draft gives {eur(owed)} still open", "amount", owed, 3, where=draft)
        )
    else:
        items.append(
            stated("owed", "The draft says nothing is left to pay", "settled", "paid in full", 3, where=draft)
        )
    if got and owed:
        items.append(
            stated("paid", f"The draft gives {eur(got)} received so far", "amount", got, 2, where=draft)
        )
    if owed:
        state = f"EUR {eur(owed)} is still open" + (
            f" (we received EUR {eur(got)} of EUR {eur(total)})"
            if got
            else f" (the full amount of EUR {eur(total)})"
        )
    else:
        state = f"the invoice is paid in full (EUR {eur(total)} received), so nothing is left to pay"
    letter = (
        f"Dear {contact['name']},\nThank you for your message about invoice {number} (total EUR {eur(total)}), which was due on "
        f"{invoice['due_date'].day} {invoice['due_date'].strftime('%B %Y')}.\nAccording to our records {state}.\n"
        + (
            "If the reminder crossed with your payment, please disregard it.\n"
            if not owed
            else "Please let us know if your records differ.\n"
        )
        + f"Kind regards,\n{full_name(asker)}\nAcme Analytics"
    )
    return Instance(
        prompt=(
            f"{asker['first_name']} needs help with a customer question they posted in #{channel}. Check the facts in our "
            f"records, draft the reply to the customer as /workspace/{path}, and let {asker['first_name']} know in "
            f"#{channel} that the draft is ready. Don't change any records."
        ),
        chat={"posts": [post(channel, asker["chat_username"], message)]},
        rubric_items=items,
        claims={"settled": SETTLED} if not owed else {},
        solution=[
            {"tool": "chat.read_channel", "args": {"channel": channel, "limit": 5}},
            sql_step(
                "SELECT i.number, i.issue_date, i.due_date, i.total, i.status, p.paid_on, p.amount FROM invoices i "
                f"LEFT JOIN payments p ON p.invoice_id = i.id WHERE i.number = {quoted(number)}"
            ),
            {"tool": "office.create_document", "args": {"path": path}},
            {"tool": "office.insert_text", "args": {"path": path, "text": letter}},
            post_step(
                channel,
                f"@{asker['chat_username']} the draft reply to {contact['name']} about {number} is ready: /workspace/{path}",
            ),
            {
                "answer": f"Checked {number} ({state}) and drafted the reply in {path}; {asker['first_name']} is told in #{channel}."
            },
        ],
        apps=["db", "chat", "office"],
        limits=LIMITS_L2,
    )
