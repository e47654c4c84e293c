"""A time-off request. Level 0: its status; level 1: how many working days it covers, excluding public holidays."""

from __future__ import annotations

import datetime as dt

from families._common import LIMITS_L0, LIMITS_L1, by_id, count_kind, full_name, sql_step, stated
from families._people import TIME_OFF_STATUS
from gym.families import Instance

TITLE = "A time-off request"
LEVELS = (0, 1)
SPLIT = "train"
DAYS = r"\b(working |business |work )?days?\b"


def generate(world, rng, level: int) -> Instance:
    people = by_id(world, "employees")
    requests = world["time_off"].dicts()
    if level == 1:  # an office with a holiday calendar (Berlin: DE, London: UK); remote staff have none
        requests = [r for r in requests if people[r["employee_id"]]["location"] in ("Berlin", "London")]
    request = rng.choice(requests)
    person = people[request["employee_id"]]
    name = full_name(person)
    query = (
        "SELECT t.start_date, t.end_date, t.kind, t.status FROM time_off t JOIN employees e ON e.id = t.employee_id "
        f"WHERE e.id = {person['id']} AND t.start_date = DATE '{request['start_date'].isoformat()}'"
    )
    if level == 0:
        status = request["status"]
        return Instance(
            prompt=f"What is the status of {name}'s time-off request starting {request['start_date'].isoformat()}?",
            rubric_items=[stated("status", f"The answer says {status}", "time_off_status", status)],
            claims={"time_off_status": TIME_OFF_STATUS},
            solution=[sql_step(query), {"answer": f"It is {status}."}],
            apps=["db"],
            limits=LIMITS_L0,
        )
    region = {"Berlin": "DE", "London": "UK"}[person["location"]]
    holidays = {h["day"] for h in world["holidays"].dicts() if h["region"] in ("ALL", region)}
    day, days = request["start_date"], 0
    while day <= request["end_date"]:
        days += day.weekday() < 5 and day not in holidays
        day += dt.timedelta(days=1)
    return Instance(
        prompt=(
            f"How many working days (Monday to Friday, not counting public holidays for {name}'s office, "
            f"{person['location']}) does {name}'s {request['kind']} from {request['start_date'].isoformat()} "
            f"to {request['end_date'].isoformat()} cover? The holidays table lists holidays by region (ALL applies everywhere)."
        ),
        rubric_items=[stated("days", f"The answer says {days} working days", "days", days, 3)],
        claims={"days": count_kind(DAYS)},
        solution=[
            sql_step(query),
            sql_step(
                "SELECT day, name, region FROM holidays WHERE day BETWEEN "
                f"DATE '{request['start_date'].isoformat()}' AND DATE '{request['end_date'].isoformat()}'"
            ),
            # The dates first: the year of a date right after "days" would read as a count of days.
            {
                "answer": f"From {request['start_date'].isoformat()} to {request['end_date'].isoformat()}: {days} working days."
            },
        ],
        apps=["db"],
        limits=LIMITS_L1,
    )
