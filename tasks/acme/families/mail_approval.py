"""Time-off decisions that arrive by e-mail, recorded in the time-off table, and only those.

Level 0: the prompt names a pending request; its manager's decision (approve or decline) is in the
inbox: record it, and leave the requester's other pending request alone. Level 1: the inbox holds
one manager's approval, another's refusal, a third manager's "not yet", and other mail: record the
two decisions, leave every other request pending. Level 2: as level 1 without the "not yet", plus an
approval from someone who may not give it: not the requester's manager (employees.manager_id) or the
requester themself. It stays pending, and the sender is told who has to decide (the manager, named).
"""

from __future__ import annotations

import datetime as dt

from families._common import LIMITS_L1, execute_step, full_name, item, sql_step, stated
from families._people import AGENT as JORDAN
from families._people import TODAY, active, iso, overlaps, people
from families.time_off_approval import DECISION, GRANT
from gym.families import Instance

TITLE = "An approval that arrives by e-mail"
LEVELS = (0, 1, 2)
SPLIT = "train"
AGENT = "jordan.lee@acme-analytics.com"
DOMAIN = "acme-analytics.com"
KINDS = ("vacation", "vacation", "training")
LIMITS = {"max_turns": 20, "time_limit_s": 600}
SAY = {
    "approved": (
        "{who}'s {kind} from {start} to {end} is fine with me: approved. Please put it through.",
        "I approve {who}'s {kind} request for {start} to {end}. Could you record it?",
    ),
    "declined": (
        "I have to decline {who}'s {kind} request for {start} to {end}: we are short-staffed that week. "
        "Please record it as declined.",
        "Sorry, {who}'s {kind} from {start} to {end} can't go ahead, it clashes with a release we can't move. "
        "Please decline it in the system.",
    ),
    "later": (
        "About {who}'s {kind} from {start} to {end}: I need to check the team calendar first and will get "
        "back to you by Friday. Please leave it open until then.",
    ),
    "wrong": (
        "{who} asked me to sign off their {kind} from {start} to {end}: approved from my side. Please put "
        "it through.",
        "Approved: {who}'s {kind} request for {start} to {end}. Please record it.",
    ),
    "self": (
        "My manager is travelling this week, so I've signed off my own {kind} from {start} to {end}. Could "
        "you mark it approved?",
    ),
}
NOISE = (
    ("Lunch on Thursday?", "Are you up for the Italian place on Thursday? 12:30 at the usual table."),
    ("Q1 close: thank you", "Thanks for your help getting the Q1 close done on time."),
    ("Easter", "Just a reminder that the office is closed on Good Friday and Easter Monday."),
)


def _span(rng, taken: list[tuple[dt.date, dt.date]]) -> tuple[dt.date, dt.date]:
    """1-5 days, two weeks to six months ahead, overlapping none of `taken`."""
    while True:
        start = TODAY + dt.timedelta(days=rng.randint(14, 180))
        span = (start, start + dt.timedelta(days=rng.randint(0, 4)))
        if not any(overlaps(span, t) for t in taken):
            return span


def _where(r: dict) -> str:
    return f"employee_id = {r['person']['id']} AND start_date = DATE '{iso(r['start'])}'"


def _mail(sender: dict, subject: str, body: str, hour: int, seen: bool = False) -> dict:
    """A mail to Jordan, signed with the sender's full name (names in the inbox cost nothing to repeat)."""
    return {
        "account": AGENT,
        "from": sender["email"],
        "to": [AGENT],
        "subject": subject,
        "date": dt.datetime(2025, 4, 4 if seen else 7, hour, 10 + hour, tzinfo=dt.UTC),
        "seen": seen,
        "body": f"Hi Jordan,\n\n{body}\n\nThanks,\n{full_name(sender)}",
    }


def _wrong_sender(world, rng, person: dict) -> dict:
    """Who sends an approval they may not give: the requester (a quarter of the time), else a manager
    or a department colleague outside the requester's line of management."""
    staff = people(world)
    chain, boss = set(), person
    while boss["manager_id"]:
        chain.add(boss["manager_id"])
        boss = staff[boss["manager_id"]]
    bosses = {p["manager_id"] for p in active(world)}
    others = [
        p
        for p in active(world)
        if (p["id"] in bosses or p["department_id"] == person["department_id"])
        and p["id"] not in chain | {person["id"]}
        and p["chat_username"] != JORDAN
    ]
    return person if rng.random() < 0.25 else rng.choice(others)


def generate(world, rng, level: int) -> Instance:
    staff = people(world)
    rows = world["time_off"].dicts()
    # Requesters whose manager is an active colleague (Jordan manages no one, and decides nothing).
    eligible = [
        p
        for p in active(world)
        if p["chat_username"] != JORDAN and p["manager_id"] and staff[p["manager_id"]]["status"] == "active"
    ]
    count = {0: 1, 1: 3, 2: 3}[level]
    chosen = rng.sample(eligible, count)
    says = {0: [rng.choice(["approved", "declined"])], 1: ["approved", "declined", "later"]}.get(
        level, [*rng.sample(["approved", "declined"], 2), "wrong"]
    )
    requests = []
    for person, say in zip(chosen, says, strict=True):
        start, end = _span(
            rng, [(r["start_date"], r["end_date"]) for r in rows if r["employee_id"] == person["id"]]
        )
        requests.append({"person": person, "start": start, "end": end, "kind": rng.choice(KINDS), "say": say})
    if level == 0:  # the requester's other pending request: not the one decided
        own = [(r["start_date"], r["end_date"]) for r in rows if r["employee_id"] == chosen[0]["id"]]
        start, end = _span(rng, [*own, (requests[0]["start"], requests[0]["end"])])
        requests.append({"person": chosen[0], "start": start, "end": end, "kind": "vacation", "say": None})
    accounts = {AGENT: {"address": AGENT, "name": "Jordan Lee", "agent": True}}
    messages: list[dict] = []
    wrong = None
    said = [r for r in requests if r["say"]]
    rng.shuffle(said)
    for hour, r in enumerate(said, 7):
        person = r["person"]
        manager = staff[person["manager_id"]]
        sender = manager
        if r["say"] == "wrong":
            sender = _wrong_sender(world, rng, person)
            wrong = (person, sender, manager, len(messages) + 1)  # ... and its message's uid
        for p in (person, manager, sender):
            accounts[p["email"]] = {"address": p["email"], "name": full_name(p)}
        key = "self" if sender is person else r["say"]
        text = rng.choice(SAY[key]).format(
            who=full_name(person), kind=r["kind"], start=iso(r["start"]), end=iso(r["end"])
        )
        subject = f"Time off: {full_name(person)}, {iso(r['start'])} to {iso(r['end'])}"
        messages.append(_mail(sender, subject, text, hour))
    for subject, body in rng.sample(NOISE, 1 + (level > 0)):
        colleague = rng.choice([p for p in active(world) if p["chat_username"] != JORDAN])
        accounts[colleague["email"]] = {"address": colleague["email"], "name": full_name(colleague)}
        messages.append(_mail(colleague, subject, body, rng.randint(8, 16), seen=True))
    decided = [r for r in requests if r["say"] in ("approved", "declined")]
    untouched = [r for r in requests if r not in decided]
    items = [
        stated(
            f"status-{r['person']['id']}-{iso(r['start'])}",
            f"{full_name(r['person'])}'s request from {iso(r['start'])} is {r['say']}",
            "decision",
            r["say"],
            4 if level == 0 else 3,
            where=f"sql:SELECT status FROM time_off WHERE {_where(r)}",
        )
        for r in decided
    ]
    pending = [str(r["id"]) for r in rows if r["status"] == "requested"]
    others = " OR ".join([f"id IN ({', '.join(pending)})", *(f"({_where(r)})" for r in untouched)])
    items.append(
        item(
            "others-untouched",
            "Penalty: a request without a valid decision in the mail was decided",
            "sql.value_equals",
            {
                "query": f"SELECT count(*) FROM time_off WHERE status <> 'requested' AND ({others})",
                "expected": 0,
            },
            -4 if level == 2 else -3,
            "database",
            reason="A penalty: it holds until the agent decides a request no mail decided.",
        )
    )
    claims = {"decision": DECISION}
    lookup = sql_step(
        "SELECT t.id, e.first_name || ' ' || e.last_name AS who, e.email, t.start_date, t.end_date, t.status, "
        "m.first_name || ' ' || m.last_name AS manager, m.email AS manager_email FROM time_off t JOIN employees e "
        "ON e.id = t.employee_id LEFT JOIN employees m ON m.id = e.manager_id WHERE t.status = 'requested'"
    )
    steps = [{"tool": "mail.read_message", "args": {"message": f"INBOX/{i + 1}"}} for i in range(len(said))]
    steps += [lookup] + [
        execute_step(f"UPDATE time_off SET status = '{r['say']}' WHERE {_where(r)}") for r in decided
    ]
    summary = "; ".join(f"{full_name(r['person'])} {iso(r['start'])}: {r['say']}" for r in decided)
    if wrong is not None:
        person, sender, manager, uid = wrong
        who, boss = full_name(person), full_name(manager)
        items.append(
            stated(
                "redirect",
                f"The reply to {sender['email']} names {who}'s manager, {boss}",
                "manager",
                boss,
                3,
                where=f"mail:{sender['email']}",
            )
        )
        # People by full name (the world's lexicon): Jordan's own name and the manager's cost nothing anywhere.
        names = sorted({full_name(p) for p in world["employees"].dicts()})
        claims["manager"] = {"values": names, "allow": ["Jordan Lee", boss]}
        body = (
            f"Hi {sender['first_name']},\n\nthanks, but only {who}'s manager, {boss}, can approve this time "
            "off, so I have left the request pending.\n\nBest,\nJordan"
        )
        steps.append({"tool": "mail.reply", "args": {"message": f"INBOX/{uid}", "body": body}})
        summary += f"; {who}: left pending, {boss} has to decide"
    steps.append({"answer": summary})
    values = ", ".join(
        f"({r['person']['id']}, '{iso(r['start'])}', '{iso(r['end'])}', '{r['kind']}', 'requested')"
        for r in requests
    )
    first = requests[0]
    prompt = {
        0: f"{full_name(first['person'])}'s {first['kind']} request for {iso(first['start'])} to "
        f"{iso(first['end'])} was waiting for approval, and their manager has answered by e-mail. Please record "
        "the decision in the time-off table.",
        1: "Managers have answered by e-mail about pending time-off requests. Please record each decision they "
        "made in the time-off table, and leave requests nobody decided pending.",
    }.get(
        level,
        "Decisions on pending time-off requests came in by e-mail. Please record them in the time-off table. Only "
        "the requester's manager (as the employees table has it) may decide a request: if a decision comes from "
        "anyone else, leave the request pending and reply to the sender with the full name of the manager who has "
        "to decide.",
    )
    return Instance(
        prompt=prompt,
        sql=GRANT
        + f"INSERT INTO time_off (employee_id, start_date, end_date, kind, status) VALUES {values};\n",
        rubric_items=items,
        claims=claims,
        solution=steps,
        apps=["db", "mail"],
        mail={"domains": [DOMAIN], "accounts": list(accounts.values()), "messages": messages},
        limits=LIMITS_L1 if level == 0 else LIMITS,
        damage={
            "allow": [
                {"table": "time_off", "columns": ["status"], "at_most": len(decided)},
                {"mail": AGENT, "may": ["change"]},  # filing the mail away is fine
            ]
        },
    )
