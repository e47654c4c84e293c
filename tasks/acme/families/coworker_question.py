"""A coworker's question by direct message, answered by DM from the database. Level 0: one fact (quoted in
the prompt); level 1: two facts from two tables; level 2: three questions about a customer, one of them
settled in the DM's thread (which deal they meant)."""

from __future__ import annotations

from collections import defaultdict

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    by_id,
    count_kind,
    dm,
    dm_step,
    full_name,
    quoted,
    sql_step,
    stated,
)
from families._finance import eur, paid_by_invoice
from families._support import AGENT, OPEN, post
from gym.families import Instance

TITLE = "Answer a coworker's direct message"
LEVELS = (0, 1, 2)
SPLIT = "train"
TICKETS = r"open (support )?tickets?|tickets? (are |still )?open|unresolved tickets?"


def generate(world, rng, level: int) -> Instance:
    people, customers = by_id(world, "employees"), by_id(world, "customers")
    stages = {s["id"]: s["name"] for s in world["pipeline_stages"].dicts()}
    deals = world["deals"].dicts()
    titles = defaultdict(int)
    for d in deals:
        titles[d["title"]] += 1
    deals = [d for d in deals if titles[d["title"]] == 1]
    if level == 2:
        return _call_prep(world, rng, people, customers, stages, deals)
    asker = rng.choice(
        [
            p
            for p in people.values()
            if p["status"] == "active" and p["chat_username"] != AGENT and p["department_id"] != 4
        ]
    )
    kind = rng.choice(["deal", "invoice", "manager"])
    if kind == "deal":
        deal = rng.choice(deals)
        question, facts = (
            f'what is the amount of the deal "{deal["title"]}"?',
            [(f"the amount {eur(deal['amount'])}", "amount", deal["amount"])],
        )
        reply = f'The deal "{deal["title"]}" is EUR {eur(deal["amount"])}'
        query = f"SELECT d.title, d.amount, s.name AS stage FROM deals d JOIN pipeline_stages s ON s.id = d.stage_id WHERE d.title = {quoted(deal['title'])}"
        if level == 1:
            question = f'what is the amount of the deal "{deal["title"]}", and who owns it on our side?'
            owner = full_name(people[deal["owner_id"]])
            facts.append((f"the owner {owner}", "employee", owner))
            reply += f", owned by {full_name(people[deal['owner_id']])}"
            query = query.replace(
                "s.name AS stage", "s.name AS stage, e.first_name || ' ' || e.last_name AS owner"
            ).replace(" WHERE", " JOIN employees e ON e.id = d.owner_id WHERE")
    elif kind == "invoice":
        invoice = rng.choice(world["invoices"].dicts())
        question, facts = (
            f"what is the total of invoice {invoice['number']}?",
            [(f"the total {eur(invoice['total'])}", "amount", invoice["total"])],
        )
        reply = f"Invoice {invoice['number']} totals EUR {eur(invoice['total'])}"
        query = f"SELECT i.number, i.total, i.status, c.name AS customer FROM invoices i JOIN customers c ON c.id = i.customer_id WHERE i.number = {quoted(invoice['number'])}"
        if level == 1:
            paid = paid_by_invoice(world)[invoice["id"]]
            question = (
                f"what is the total of invoice {invoice['number']}, and how much has been paid on it so far?"
            )
            facts.append((f"{eur(paid)} paid", "amount", paid))
            reply += f"; paid so far: EUR {eur(paid)}"
            query = f"SELECT i.number, i.total, coalesce(sum(p.amount), 0) AS paid FROM invoices i LEFT JOIN payments p ON p.invoice_id = i.id WHERE i.number = {quoted(invoice['number'])} GROUP BY i.id"
    else:
        customer = rng.choice(sorted(customers.values(), key=lambda c: c["id"]))
        manager = people[customer["account_manager_id"]]
        question, facts = (
            f"who is our account manager for {customer['name']}?",
            [(full_name(manager), "employee", full_name(manager))],
        )
        reply = f"{full_name(manager)} is the account manager for {customer['name']}"
        query = f"SELECT c.name, e.first_name, e.last_name, e.email FROM customers c JOIN employees e ON e.id = c.account_manager_id WHERE c.name = {quoted(customer['name'])}"
        if level == 1:
            contact = next(
                c for c in world["contacts"].dicts() if c["customer_id"] == customer["id"] and c["is_primary"]
            )
            question = f"who is our account manager for {customer['name']}, and what is the e-mail of their primary contact?"
            facts.append((contact["email"], "email", contact["email"]))
            reply += f"; their primary contact is {contact['name']} <{contact['email']}>"
            query += f"; SELECT name, email FROM contacts WHERE customer_id = {customer['id']} AND is_primary"
    message = f"Hi Jordan, {question}"
    channel = dm(asker["chat_username"])
    steps = [sql_step(q) for q in query.split("; ")]
    if level == 0:
        prompt = f'{asker["first_name"]} {asker["last_name"]} sent you a direct message: "{message}" Look it up and answer them by direct message.'
    else:
        prompt = f"{full_name(asker)} sent you a direct message. Please answer it by direct message."
        steps.insert(
            0, {"tool": "chat.read_channel", "args": {"channel": "@" + asker["chat_username"], "limit": 5}}
        )
    return Instance(
        prompt=prompt,
        chat={"posts": [post(channel, asker["chat_username"], message)]},
        rubric_items=[
            stated(f"fact-{i}", f"The DM reply gives {what}", kind, value, 3, where=channel)
            for i, (what, kind, value) in enumerate(facts, 1)
        ],
        solution=[
            *steps,
            dm_step(asker["chat_username"], f"Hi {asker['first_name']}, {reply}."),
            {"answer": f"Answered {asker['first_name']} by DM: {reply}."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L0 if level == 0 else LIMITS_L1,
    )


def _call_prep(world, rng, people, customers, stages, deals) -> Instance:
    mine = defaultdict(list)
    for d in deals:
        mine[d["customer_id"]].append(d)
    deal = rng.choice([d for d in deals if len(mine[d["customer_id"]]) >= 2])
    customer = customers[deal["customer_id"]]
    asker = rng.choice([people[customer["account_manager_id"]], people[12], people[13]])
    paid = paid_by_invoice(world)
    owed = sum(
        (
            i["total"] - paid[i["id"]]
            for i in world["invoices"].dicts()
            if i["customer_id"] == customer["id"] and i["status"] in ("sent", "partially_paid")
        ),
        start=0,
    )
    n = sum(
        t["customer_id"] == customer["id"] and t["status"] in OPEN for t in world["support_tickets"].dicts()
    )
    channel = dm(asker["chat_username"])
    thread = [
        {
            "user": AGENT,
            "create_at": "2025-04-04T17:22:00Z",
            "message": f"Sure! Quick check on 3): which deal do you mean? {customer['name']} has "
            f"{len(mine[customer['id']])} deals with us.",
        },
        {
            "user": asker["chat_username"],
            "create_at": "2025-04-04T17:35:00Z",
            "message": f'Sorry, the one called "{deal["title"]}".',
        },
    ]
    message = (
        f"Hi Jordan, I'm calling {customer['name']} on Monday. Could you find out: 1) how much they still owe us in total "
        "(open invoices minus what they have paid), 2) how many support tickets they have open (new, open or pending), "
        "and 3) the amount and stage of our deal with them?"
    )
    stage = stages[deal["stage_id"]]
    # Another deal's amount, or the figures posted anywhere but the DM, are wrong or misplaced amounts (grader.claims).
    items = [
        stated("owed", f"The DM gives the balance {eur(owed)}", "amount", owed, 3, where=channel),
        stated("tickets", f"The DM gives {n} open tickets", "open_tickets", n, 3, where=channel),
        stated(
            "amount",
            f"The DM gives the deal's amount {eur(deal['amount'])}",
            "amount",
            deal["amount"],
            3,
            where=channel,
        ),
        stated("stage", f"The DM gives the deal's stage {stage}", "stage", stage, 2, where=channel),
    ]
    reply = (
        f"Hi {asker['first_name']}, for your {customer['name']} call:\n1) They owe EUR {eur(owed)} in total on open invoices.\n"
        f"2) They have {n} open support tickets.\n3) {deal['title']}: EUR {eur(deal['amount'])}, stage {stages[deal['stage_id']]}."
    )
    return Instance(
        prompt=f"{full_name(asker)} sent you questions by direct message on Friday. Please answer them by direct message.",
        chat={
            "posts": [post(channel, asker["chat_username"], message, "2025-04-04T17:10:00Z", replies=thread)]
        },
        rubric_items=items,
        claims={"open_tickets": count_kind(TICKETS)},
        solution=[
            {"tool": "chat.read_channel", "args": {"channel": "@" + asker["chat_username"], "limit": 5}},
            {"tool": "chat.search_messages", "args": {"query": "deal", "from_user": asker["chat_username"]}},
            sql_step(
                "SELECT i.number, i.total, i.total - coalesce((SELECT sum(amount) FROM payments p WHERE p.invoice_id = i.id), 0) AS open "
                f"FROM invoices i WHERE i.customer_id = {customer['id']} AND i.status IN ('sent', 'partially_paid')"
            ),
            sql_step(
                f"SELECT count(*) FROM support_tickets WHERE customer_id = {customer['id']} AND status IN ('new', 'open', 'pending')"
            ),
            sql_step(
                f"SELECT d.title, d.amount, s.name FROM deals d JOIN pipeline_stages s ON s.id = d.stage_id WHERE d.title = {quoted(deal['title'])}"
            ),
            dm_step(asker["chat_username"], reply),
            {"answer": f"Answered {asker['first_name']}'s three questions about {customer['name']} by DM."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
