"""First-response SLA breaches. Level 0: an SLA's hours for a priority (or the priority for some hours);
level 1: did a named ticket get its first response in time, and how long it took; level 2: a month's or
week's breaches by priority and the agent with the most, posted where asked."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from families._common import (
    LIMITS_L0,
    LIMITS_L1,
    LIMITS_L2,
    MONTHS,
    answer,
    by_id,
    count_regex,
    dm,
    full_name,
    no_spray,
    post_step,
    sql_step,
    text_regex,
)
from families._support import (
    MET,
    MISSED,
    PRIORITIES,
    breached,
    hours_regex,
    item,
    loose,
    minutes_to_first_response,
    number,
    sla,
)
from gym.families import Instance

TITLE = "First-response SLA breaches"
LEVELS = (0, 1, 2)
SPLIT = "train"
KINDS = {"first_response_hours": "first response", "resolution_hours": "resolution"}
ASK = (
    "How many hours does the {kind} SLA allow for {p}-priority support tickets? The table is sla_policies.",
    "Per sla_policies, what is the {kind} time limit in hours for a ticket of priority {p}?",
    "A customer opened a {p}-priority ticket. Within how many hours is our {kind} due (sla_policies)?",
)
HOURS = r"hours?|hrs?|h\b"
BREACH_SQL = (
    "SELECT t.priority, e.first_name || ' ' || e.last_name AS assignee, count(*) AS tickets, "
    "count(*) FILTER (WHERE t.first_response_at - t.created_at > make_interval(hours => s.first_response_hours)) AS breaches "
    "FROM support_tickets t JOIN sla_policies s ON s.priority = t.priority LEFT JOIN employees e ON e.id = t.assignee_id "
    "WHERE t.created_at >= '{start}' AND t.created_at < '{end}' GROUP BY ROLLUP (t.priority, 2) ORDER BY 1, 2"
)


def generate(world, rng, level: int) -> Instance:
    policies = sla(world)
    if level == 0:
        kind = rng.choice(sorted(KINDS))
        p = rng.choice(PRIORITIES)
        hours = policies[p][kind]
        step = sql_step(f"SELECT priority, {kind} FROM sla_policies ORDER BY {kind}")
        if rng.random() < 0.25:  # the reverse question: which priority has these hours
            others = [text_regex(q) for q in PRIORITIES if q != p]
            return Instance(
                prompt=f"Which ticket priority has a {KINDS[kind]} SLA of {hours} hours (sla_policies)?",
                rubric_items=[answer("priority", f"The answer says {p}", text_regex(p)), no_spray(others, "other priorities")],
                solution=[step, {"answer": f"{p.capitalize()}: its {KINDS[kind]} SLA is {hours} hours."}],
                apps=["postgres"],
                limits=LIMITS_L0,
            )  # fmt: skip
        others = sorted({policies[q][kind] for q in PRIORITIES} - {hours})
        return Instance(
            prompt=rng.choice(ASK).format(kind=KINDS[kind], p=p),
            rubric_items=[
                answer("hours", f"The answer says {hours} hours", count_regex(hours, HOURS)),
                no_spray([count_regex(h, HOURS) for h in others], "other priorities' hours"),
            ],
            solution=[step, {"answer": f"The {KINDS[kind]} SLA for {p} priority is {hours} hours."}],
            apps=["postgres"],
            limits=LIMITS_L0,
        )
    tickets = world["support_tickets"].dicts()
    if level == 1:
        missed = rng.random() < 0.5
        ticket = rng.choice([t for t in tickets if breached(t, policies) == missed])
        taken, allowed = (
            minutes_to_first_response(ticket),
            policies[ticket["priority"]]["first_response_hours"],
        )
        verdict = "missed" if missed else "met"
        return Instance(
            prompt=(
                f"Did support ticket {ticket['id']} get its first response quickly enough for its priority's "
                "first-response SLA (sla_policies)? Also say how many hours the first response took."
            ),
            rubric_items=[
                answer("verdict", f"The answer says the SLA was {verdict}", MISSED if missed else MET, 3),
                answer("taken", f"The answer says it took {taken / 60:.2f} hours", hours_regex(taken)),
                answer(
                    "allowed", f"The answer gives the {allowed}-hour limit", count_regex(allowed, HOURS), 1
                ),
                no_spray([MET if missed else MISSED], "the opposite verdict", -3),
            ],
            solution=[
                sql_step(
                    "SELECT t.id, t.priority, t.created_at, t.first_response_at, t.first_response_at - t.created_at AS taken, "
                    "s.first_response_hours FROM support_tickets t JOIN sla_policies s ON s.priority = t.priority "
                    f"WHERE t.id = {ticket['id']}"
                ),
                {
                    "answer": f"Ticket {ticket['id']} is {ticket['priority']} priority ({allowed} hours allowed). The first "
                    f"response took {taken / 60:.2f} hours ({taken // 60} h {taken % 60} min), so the SLA was {verdict}."
                },
            ],
            apps=["postgres"],
            limits=LIMITS_L1,
        )
    return _period(world, rng, policies, tickets)


def _periods(tickets, policies):
    """Calendar months and ISO weeks with at least two breaches and one agent with the most."""
    out = []
    for year, month in sorted({(t["created_at"].year, t["created_at"].month) for t in tickets}):
        start = dt.date(year, month, 1)
        end = dt.date(year + month // 12, month % 12 + 1, 1)
        out.append((f"{MONTHS[month - 1]} {year}", start, end))
    first = min(t["created_at"].date() for t in tickets)
    for n in range(20):
        day = first - dt.timedelta(first.weekday()) + dt.timedelta(7 * n)
        out.append(
            (
                f"the week of {day.day} {MONTHS[day.month - 1]} {day.year} (Monday to Sunday)",
                day,
                day + dt.timedelta(7),
            )
        )
    good = []
    for label, start, end in out:
        mine = [t for t in tickets if start <= t["created_at"].date() < end]
        top = Counter(t["assignee_id"] for t in mine if breached(t, policies)).most_common()
        if (
            sum(n for _, n in top) >= 2
            and (len(top) == 1 or top[0][1] > top[1][1])
            and end <= dt.date(2025, 4, 7)
        ):
            good.append((label, start, end, mine))
    return good  # fmt: skip


def _period(world, rng, policies, tickets) -> Instance:
    people = by_id(world, "employees")
    label, start, end, mine = rng.choice(_periods(tickets, policies))
    late = [t for t in mine if breached(t, policies)]
    per = Counter(t["priority"] for t in late)
    (top_id, top_n), *rest = Counter(t["assignee_id"] for t in late).most_common()
    top = full_name(people[top_id])
    others = [
        loose(full_name(a))
        for a in people.values()
        if a["department_id"] == people[top_id]["department_id"] and a["id"] != top_id
    ]
    asker = rng.choice(["priya.sharma", "jonas.weber"])
    person = next(p for p in people.values() if p["chat_username"] == asker)
    name = full_name(person)
    where, place = rng.choice(
        [("support", "in #support"), (dm(asker), f"to {person['first_name']} by direct message")]
    )
    breaches = count_regex(len(late), r"breach\w*|missed|late")
    breaches += (
        rf"|(?i:{number(len(late))} ?(of|out of|/) ?{len(mine)} tickets? (were |have )?(breach\w*|missed))"
    )

    def p_regex(p):
        zero = r"|\bnone\b|\bno\b|\bzero\b" if per[p] == 0 else ""
        return rf"(?i:\b{p}\b[^\d\n]{{0,20}}(?:{number(per[p])}{zero})|{number(per[p])} {p}\b)"

    items = [
        item("tickets", f"The post gives {len(mine)} tickets created", "posted", {"channel": where, "all_of": [count_regex(len(mine), "tickets?")]}, 1, "counts"),
        item("breaches", f"The post gives {len(late)} breaches", "posted", {"channel": where, "all_of": [breaches]}, 4, "counts"),
        *[item(f"priority-{p}", f"{p}: {per[p]} breaches", "posted", {"channel": where, "all_of": [p_regex(p)]}, 1, "per priority") for p in PRIORITIES],
        item("top", f"{top} has the most breaches ({top_n})", "posted", {"channel": where, "all_of": [rf"{loose(top)}[^\n]{{0,40}}{number(top_n)}"]}, 3, "assignee"),
        item("not-top", "Penalty: another agent is named as the one with the most breaches", "posted",
             {"channel": where, "all_of": [rf"(?i:(most|top|highest)\W[^\n]{{0,30}}({'|'.join(others)}))"]}, -3, "assignee",
             negate=True, reason="A penalty: it holds until a post names the wrong agent."),
    ]  # fmt: skip
    message = (
        f"First-response SLA, tickets created in {label}: {len(late)} breaches out of {len(mine)} tickets created.\n"
        + "Per priority: " + ", ".join(f"{p} {per[p]}" for p in PRIORITIES) + ".\n"
        + f"Most breaches: {top} ({top_n})."
    )  # fmt: skip
    step = (
        post_step("support", message)
        if where == "support"
        else {"tool": "chat.send_direct_message", "args": {"username": asker, "message": message}}
    )
    return Instance(
        prompt=(
            f"{name} wants the first-response SLA breaches for tickets created in {label}. A ticket breaches when its "
            "first response came later than its priority's first_response_hours after it was created. Post the number "
            "of tickets created, the number of breaches, the breaches per priority (all four) and the assignee with the "
            f"most breaches (with their count) {place}. Don't change anything."
        ),
        rubric_items=items,
        solution=[sql_step(BREACH_SQL.format(start=start, end=end)), step, {"answer": f"Posted the {label} SLA breaches {place}."}],
        apps=["postgres", "chat"],
        limits=LIMITS_L2,
    )  # fmt: skip
