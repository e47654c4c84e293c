"""Answering about a customer. Level 1: a coworker asks in a channel how many open tickets a customer has
(reply there); level 2: a customer asks what is still open on an invoice: check the records, draft the
reply as a .docx and tell the coworker in their channel."""

from __future__ import annotations

from collections import defaultdict

from families._common import (
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_regex,
    date_regex,
    full_name,
    post_step,
    quoted,
    sql_step,
)
from families._finance import eur, paid_by_invoice, slug
from families._support import OPEN, item, post
from gym.families import Instance

TITLE = "Answer a question about a customer"
LEVELS = (1, 2)
SPLIT = "train"
TICKETS = r"open (support )?tickets?|tickets? (are |still )?open|unresolved tickets?"
ASK = (
    "@jordan.lee quick one: how many open support tickets (new, open or pending) does {c} have right now? I have a call with them at 11.",
    "Hi @jordan.lee, before I meet {c} this afternoon: how many unresolved tickets (status new, open or pending) do they have with us?",
    "@jordan.lee could you check how many tickets {c} currently has open (new, open or pending)? Want to know before I call them.",
)  # fmt: skip
PAID = r"(?i:paid in full|fully paid|fully settled|nothing (is )?(left |still )?(open|outstanding|due|owed)|no (open |outstanding )?(amount|balance)|balance of (EUR |€ ?)?0(\.00)?\b)"


def generate(world, rng, level: int) -> Instance:
    people, customers = by_id(world, "employees"), by_id(world, "customers")
    if level == 2:
        return _invoice_reply(world, rng, people, customers)
    tickets = defaultdict(list)
    for t in world["support_tickets"].dicts():
        tickets[t["customer_id"]].append(t)
    busy = sorted(c for c, ts in tickets.items() if any(t["status"] in OPEN for t in ts))
    customer = customers[rng.choice(busy if rng.random() < 0.75 else sorted(customers))]
    mine = tickets[customer["id"]]
    n = sum(t["status"] in OPEN for t in mine)
    wrong = {len(mine), sum(t["status"] == "open" for t in mine)} - {n}
    manager = people[customer["account_manager_id"]]
    channel, asker = rng.choice([("sales", manager), ("support", people[29]), ("support", people[22])])
    right = count_regex(n, TICKETS) + (r"|(?i:\bno (open|unresolved) (support )?tickets?)" if n == 0 else "")
    items = [item("count", f"The reply in #{channel} gives {n} open tickets", "posted", {"channel": channel, "all_of": [right]}, 3, "reply")]  # fmt: skip
    if wrong:
        items.append(item("wrong-count", "Penalty: the reply counts resolved/closed tickets or only status open", "posted",
                          {"channel": channel, "all_of": ["|".join(count_regex(k, TICKETS) for k in sorted(wrong))]}, -2, "reply",
                          negate=True, reason="A penalty: it holds until a wrong count is posted."))  # fmt: skip
    return Instance(
        prompt=f"{full_name(asker)} asked you a question in #{channel}. Please answer it there.",
        chat={"posts": [post(channel, asker["chat_username"], rng.choice(ASK).format(c=customer["name"]))]},
        rubric_items=items,
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
        ],  # fmt: skip
        apps=["postgres", "chat"],
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
    doc = {"path": path}
    message = (
        f"{contact['name']} ({contact['role']} at {customer['name']}) wrote to me about a payment reminder for invoice "
        f"{number}: what exactly is still open on it, and when was it due? @jordan.lee could you check what we have on "
        "record and draft a reply I can send?"
    )
    items = [
        item("draft", f"The draft is a letter to {contact['name']}", "documents.document_contains", {**doc, "regex": contact["name"].split()[-1]}, 2, "draft"),
        item("invoice", f"The draft names invoice {number}", "documents.document_contains", {**doc, "text": number}, 2, "facts"),
        item("total", f"The draft gives the invoice total {eur(total)}", "document_has_amount", {**doc, "amount": float(total)}, 1, "facts"),
        item("due", f"The draft gives the due date {invoice['due_date']}", "documents.document_contains", {**doc, "regex": date_regex(invoice["due_date"])}, 1, "facts"),
        item("told", f"{asker['first_name']} is told in #{channel} where the draft is", "posted", {"channel": channel, "regex": path.rsplit("/", 1)[1].replace(".", r"\.")}, 2, "chat"),
    ]  # fmt: skip
    if owed:
        items.append(item("owed", f"The draft gives {eur(owed)} still open", "document_has_amount", {**doc, "amount": float(owed)}, 3, "facts"))  # fmt: skip
    else:
        items.append(item("owed", "The draft says nothing is left to pay", "documents.document_contains", {**doc, "regex": PAID}, 3, "facts"))  # fmt: skip
    if got and owed:
        items.append(item("paid", f"The draft gives {eur(got)} received so far", "document_has_amount", {**doc, "amount": float(got)}, 2, "facts"))  # fmt: skip
    state = (
        f"EUR {eur(owed)} is still open" + (f" (we received EUR {eur(got)} of EUR {eur(total)})" if got else f" (the full amount of EUR {eur(total)})")
        if owed else f"the invoice is paid in full (EUR {eur(total)} received), so nothing is left to pay"
    )  # fmt: skip
    letter = (
        f"Dear {contact['name']},\nThank you for your message about invoice {number} (total EUR {eur(total)}), which was due on "
        f"{invoice['due_date'].day} {invoice['due_date'].strftime('%B %Y')}.\nAccording to our records {state}.\n"
        + ("If the reminder crossed with your payment, please disregard it.\n" if not owed else "Please let us know if your records differ.\n")
        + f"Kind regards,\n{full_name(asker)}\nAcme Analytics"
    )  # fmt: skip
    return Instance(
        prompt=(
            f"{asker['first_name']} needs help with a customer question they posted in #{channel}. Check the facts in our "
            f"records, draft the reply to the customer as /workspace/{path}, and let {asker['first_name']} know in "
            f"#{channel} that the draft is ready. Don't change any records."
        ),
        chat={"posts": [post(channel, asker["chat_username"], message)]},
        rubric_items=items,
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
        ],  # fmt: skip
        apps=["postgres", "chat", "office"],
        limits=LIMITS_L2,
    )
