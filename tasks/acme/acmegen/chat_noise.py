"""Months of ordinary chat around the planted messages: templates filled from the world's data."""

from __future__ import annotations

import datetime as dt
import random

from . import roster
from .roster import BY_USER

# channel -> [(root text, [reply texts])]; {c} customer, {p} a colleague's first name, {n} a number, {d} a weekday
TEMPLATES: dict[str, list[tuple[str, list[str]]]] = {
    "general": [
        (
            "All-hands is on {d} at 16:00 in the Berlin kitchen and on video for London and remote folks.",
            ["Will there be pizza?", "Recording please for the remote crowd :pray:"],
        ),
        ("The Berlin office Wi-Fi will be down for maintenance on {d} evening from 19:00.", []),
        ("Reminder: please book desks for next week in the office planner.", ["Done!"]),
        ("Happy work anniversary {p}! {n} years at Acme :tada:", ["Congrats!!", "Time flies!"]),
        ("Coffee machine on the 2nd floor is fixed again :coffee:", ["Best news of the week", "Finally"]),
        ("Fire drill in the London office on {d} at 11:00.", []),
        (
            "New blog post is live: how Acme Insights handles 10x more data with the new engine.",
            ["Great write-up {p}!"],
        ),
    ],
    "random": [
        (
            "Anyone up for lunch at the Vietnamese place at 12:30?",
            ["In!", "Can't today, next time", "Count me in"],
        ),
        ("Look who joined the office today :dog: (photo of {p}'s dog)", ["So cute", "Best colleague"]),
        ("Book recommendations for the weekend?", ["Project Hail Mary!", "Anything by Ursula K. Le Guin"]),
        (
            "Who left a birthday cake in the kitchen? Asking for {n} friends.",
            ["It's {p}'s birthday!", "Happy birthday!"],
        ),
        ("Running club on {d} after work, 5 km by the canal.", ["I'll join", "Too cold for me :cold_face:"]),
        ("Has anyone seen my blue umbrella?", ["Meeting room 3"]),
        ("Board game night this {d}?", ["Yes! Bringing Catan", "I'm in"]),
    ],
    "finance": [
        ("Payment run for supplier invoices goes out on {d}.", ["Thanks, I'll approve mine today"]),
        ("{c} paid their open invoice, I matched it in the ERP.", ["Great, one less on the overdue list"]),
        ("Reminder: expense claims need a receipt above EUR 25.", []),
        (
            "Does anyone know the VAT ID of {c}? Their PO doesn't show it.",
            ["It's in the customer folder, I'll send it"],
        ),
        (
            "Bank statement for last week is imported; {n} transactions still unmatched.",
            ["I'll look at them after lunch"],
        ),
        ("Auditors asked for the January cut-off list, sending it today.", ["Thanks {p}"]),
        ("Can someone double-check the credit note for {c}?", ["Looks right to me", "Approved"]),
    ],
    "sales": [
        (
            "Demo with {c} went really well, they want a proposal by {d}.",
            ["Nice one!", "Let me know if you need the ROI deck"],
        ),
        ("Closed won: {c} :tada:", ["Congrats!", ":moneybag:", "Great work"]),
        ("Who has the latest version of the enterprise security questionnaire?", ["In the sales drive, v3"]),
        ("{c} went quiet after the proposal. Any ideas?", ["Try their CFO", "Offer a workshop"]),
        ("Pipeline review moved to {d} 10:00.", []),
        (
            "Lost {c} to a cheaper competitor, feedback was price.",
            ["Happens, onwards", "Let's talk in the review"],
        ),
        ("Solutions engineering is booked out until {d}, please plan demos early.", ["Noted"]),
    ],
    "support": [
        (
            "{c} reports slow dashboards since this morning, looking into it.",
            ["Probably the index rebuild, checking", "Resolved, was a cache issue"],
        ),
        ("Reminder: please set the first response time on your tickets.", []),
        ("Knowledge base article for SSO setup is updated.", ["Thanks {p}!"]),
        ("Who knows the connector limits for {c}'s SAP setup?", ["Ask {p}", "It's 50 tables per sync"]),
        ("Ticket backlog is down to {n} open tickets :muscle:", ["Great job team"]),
        ("{c} asked for a call about their renewal; looping in Amara.", ["On it"]),
        ("Status page shows degraded performance in EU-West, engineering is on it.", ["Fixed now"]),
    ],
    "engineering": [
        ("Release {n}.{n2} is out: faster exports and a fix for the forecast totals.", ["Nice!", ":rocket:"]),
        ("Deploy freeze on {d} for the database upgrade.", ["Noted"]),
        (
            "Code review needed on the connector refactor, it's big, sorry.",
            ["I'll take it", "Taking the tests part"],
        ),
        ("CI is red on main, looking.", ["Flaky test again", "Fixed"]),
        ("Incident review for last week's outage is on {d} at 14:00.", []),
        ("Who owns the PDF export service these days?", ["{p} does"]),
        ("Tech talk on {d}: Postgres query plans for humans.", ["Looking forward!"]),
    ],
    "ops": [
        ("Ops sync agenda for {d}: Q1 close, Easter cover, laptops.", ["Adding the new hire topic"]),
        ("New office chairs arrive on {d}.", [":chair:"]),
        ("The London lease renewal is signed.", ["Great news"]),
        ("Reminder to log equipment requests in the ops form.", []),
    ],
    "people": [
        ("Interview schedule for the support role is in the calendar.", ["Thanks {p}"]),
        ("Reminder: performance review forms are due on {d}.", []),
        ("Benefits provider changes from May, FAQ draft is ready for review.", ["Looks good"]),
    ],
    "leadership": [
        ("Board deck draft is ready for comments.", ["Added my slides", "Looks good"]),
        ("Hiring plan Q2 for review on {d}.", []),
        ("Customer advisory board: {c} confirmed.", ["Great"]),
    ],
}
DM_LINES = [
    ("Do you have a minute later?", "Sure, after 3?"),
    ("Thanks for your help today!", "Anytime :)"),
    ("Can you send me the slides from yesterday?", "Sent!"),
    ("Are you in the office tomorrow?", "Yes, from 9"),
    ("Lunch?", "Give me 10 min"),
]
EMOJIS = ["+1", "heart", "joy", "tada", "eyes", "raised_hands", "pray", "white_check_mark", "rocket", "smile"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
PER_DAY = {
    "general": 0.5,
    "random": 0.9,
    "finance": 0.8,
    "sales": 1.0,
    "support": 1.2,
    "engineering": 1.0,
    "ops": 0.3,
    "people": 0.3,
    "leadership": 0.3,
}


def working_days(start: dt.date, end: dt.date) -> list[dt.date]:
    days, day = [], start
    while day <= end:
        if day.weekday() < 5:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def noise(rng: random.Random, members: dict[str, list[str]], customers: list[str]) -> list[tuple]:
    """(key, where, user, when, text, extra) tuples for ordinary chatter, threads, reactions and DMs."""
    out: list[tuple] = []
    days = working_days(dt.date(2025, 1, 6), dt.date(2025, 4, 4))
    for day in days:
        for channel, rate in PER_DAY.items():
            count = int(rate) + (rng.random() < rate - int(rate))
            for _ in range(count):
                out.extend(_thread(rng, channel, members[channel], customers, day, len(out)))
        if day.weekday() == 0:
            engineer = roster.SUPPORT_ENGINEERS[(day.isocalendar()[1]) % len(roster.SUPPORT_ENGINEERS)]
            out.append(
                (
                    f"n{len(out)}",
                    "support",
                    "jonas.weber",
                    f"{day}T08:0{rng.randint(0, 9)}",
                    f"On call this week: @{roster.BY_ID[engineer].username} takes new tickets.",
                    {},
                )
            )
        if rng.random() < 0.35:
            out.extend(_dm(rng, members["general"], day, len(out)))
    return out


def _fill(rng: random.Random, text: str, people: list[str], customers: list[str]) -> str:
    return text.format(
        c=rng.choice(customers),
        p=BY_USER[rng.choice(people)].first,
        n=rng.randint(2, 9),
        n2=rng.randint(0, 20),
        d=rng.choice(WEEKDAYS),
    )


def _thread(rng, channel, people, customers, day, base) -> list[tuple]:
    root_text, replies = rng.choice(TEMPLATES[channel])
    author = rng.choice(people)
    minute = rng.randint(8 * 60, 17 * 60 + 30)
    key = f"n{base}"
    reactions = [
        (u, rng.choice(EMOJIS))
        for u in rng.sample(people, k=min(len(people), rng.choice((0, 0, 1, 2, 3))))
        if u != author
    ]
    msgs = [
        (
            key,
            channel,
            author,
            _at(day, minute),
            _fill(rng, root_text, people, customers),
            {"reactions": _unique(reactions)} if reactions else {},
        )
    ]
    for i, reply in enumerate(replies[: rng.randint(0, len(replies))]):
        who = rng.choice([p for p in people if p != author] or people)
        msgs.append(
            (
                f"{key}r{i}",
                channel,
                who,
                _at(day, minute + 3 + 7 * i),
                _fill(rng, reply, people, customers),
                {"root": key},
            )
        )
    return msgs


def _dm(rng, people, day, base) -> list[tuple]:
    a, b = sorted(rng.sample([p for p in people if p != roster.AGENT.username], 2))
    ask, answer = rng.choice(DM_LINES)
    minute = rng.randint(9 * 60, 17 * 60)
    return [
        (f"n{base}", f"dm:{a},{b}", a, _at(day, minute), ask, {}),
        (f"n{base}a", f"dm:{a},{b}", b, _at(day, minute + 2), answer, {}),
    ]


def _at(day: dt.date, minute: int) -> str:
    return f"{day}T{minute // 60:02d}:{minute % 60:02d}"


def _unique(reactions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen, out = set(), []
    for r in reactions:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out
