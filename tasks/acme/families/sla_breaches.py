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
    by_id,
    count_kind,
    dm,
    full_name,
    post_step,
    sql_step,
    stated,
)
from families._support import PRIORITIES, VERDICT, breached, minutes_to_first_response, sla
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
HOURS = r"\b(hours?|hrs?|h)\b"
# A duration as written: 5.7 hours, 5 h 41 min, 341 minutes; within 3 minutes of the exact one
# (5.7 hours is 342 minutes).
DURATION = {"extract": "duration", "tolerance": 3}
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
            return Instance(
                prompt=f"Which ticket priority has a {KINDS[kind]} SLA of {hours} hours (sla_policies)?",
                rubric_items=[stated("priority", f"The answer says {p}", "priority", p)],
                solution=[step, {"answer": f"{p.capitalize()}: its {KINDS[kind]} SLA is {hours} hours."}],
                apps=["db"],
                limits=LIMITS_L0,
            )
        return Instance(
            prompt=rng.choice(ASK).format(kind=KINDS[kind], p=p),
            rubric_items=[stated("hours", f"The answer says {hours} hours", "hours", hours)],
            claims={"hours": count_kind(HOURS)},
            solution=[step, {"answer": f"The {KINDS[kind]} SLA for {p} priority is {hours} hours."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    tickets = world["support_tickets"].dicts()
    if level == 1:
        missed = rng.random() < 0.5

        def clear(
            t,
        ) -> bool:  # a first response not within minutes of the limit: "4 hours" states one of them
            return (
                abs(minutes_to_first_response(t) - 60 * policies[t["priority"]]["first_response_hours"]) > 6
            )

        ticket = rng.choice([t for t in tickets if breached(t, policies) == missed and clear(t)])
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
                stated("verdict", f"The answer says the SLA was {verdict}", "verdict", verdict, 3),
                stated("taken", f"The answer says it took {taken / 60:.2f} hours", "duration", taken),
                stated(
                    "allowed",
                    f"The answer gives the {allowed}-hour limit",
                    "duration",
                    60 * allowed,
                    1,
                    tolerance=0,
                ),
            ],
            claims={"verdict": VERDICT, "duration": DURATION},
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
            apps=["db"],
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
        # The week by its ISO date: "the week of 3 March" would put a 3 next to "tickets" in the prompt.
        out.append((f"the week starting {day.isoformat()} (Monday to Sunday)", day, day + dt.timedelta(7)))
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
    return good


def _period(world, rng, policies, tickets) -> Instance:
    people = by_id(world, "employees")
    label, start, end, mine = rng.choice(_periods(tickets, policies))
    late = [t for t in mine if breached(t, policies)]
    per = Counter(t["priority"] for t in late)
    (top_id, top_n), *rest = Counter(t["assignee_id"] for t in late).most_common()
    top = full_name(people[top_id])
    asker = rng.choice(["priya.sharma", "jonas.weber"])
    person = next(p for p in people.values() if p["chat_username"] == asker)
    name = full_name(person)
    where, place = rng.choice(
        [("#support", "in #support"), (dm(asker), f"to {person['first_name']} by direct message")]
    )
    # Counts are claims of two kinds: tickets created, and breaches (in all, per priority, of the top
    # assignee: a count is attributed to the priority or the person it stands next to). The kind named
    # first reads its numbers first, so "5 breaches out of 12 tickets" gives 12 to the tickets.
    items = [
        stated(
            "tickets", f"The post gives {len(mine)} tickets created", "all_tickets", len(mine), 1, where=where
        ),
        stated("breaches", f"The post gives {len(late)} breaches", "breaches", len(late), 4, where=where),
        *[
            stated(f"priority-{p}", f"{p}: {per[p]} breaches", "breaches", per[p], 1, where=where, about=p)
            for p in PRIORITIES
        ],
        stated("top", f"{top} has the most breaches", "employee", top, 2, where=where),
        stated("top-count", f"{top} has {top_n} breaches", "breaches", top_n, 1, where=where, about=top),
    ]
    message = (
        f"First-response SLA, tickets created in {label}:\n"
        + f"{len(mine)} tickets created, {len(late)} breaches.\n"
        + "Per priority: "
        + ", ".join(f"{p} {per[p]}" for p in PRIORITIES)
        + ".\n"
        + f"Most breaches: {top} ({top_n})."
    )
    step = (
        post_step("support", message)
        if where == "#support"
        else {"tool": "chat.send_direct_message", "args": {"username": asker, "message": message}}
    )
    return Instance(
        prompt=(
            f"{name} wants the first-response SLA breaches for tickets created in {label}. A ticket breaches when its "
            "first response came later than its priority's first_response_hours after it was created. Post the number "
            "of tickets created, the number of breaches, the breaches per priority (urgent, high, normal and low) and the assignee with the "
            f"most breaches (with their count) {place}. Don't change anything."
        ),
        rubric_items=items,
        claims={
            "all_tickets": count_kind(r"\btickets?\b"),
            "breaches": count_kind(r"\b(breach\w*|missed|late|urgent|high|normal|low)\b"),
        },
        solution=[
            sql_step(BREACH_SQL.format(start=start, end=end)),
            step,
            {"answer": f"Posted the SLA report {place}."},
        ],
        apps=["db", "chat"],
        limits=LIMITS_L2,
    )
