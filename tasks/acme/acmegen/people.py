"""Departments, employees, salaries, holidays and time off."""

from __future__ import annotations

import datetime as dt

from . import roster
from .model import WorldData, between, day
from .roster import BY_USER, PEOPLE
from .sqlwrite import money

DEPT_HEADS = {"EXEC": 1, "FIN": 2, "HR": 8, "SAL": 12, "SUP": 22, "ENG": 30}

# Time off that tasks depend on (easter-coverage): who in support is away 14-25 April.
PLANTED_TIME_OFF = [
    ("lena.vogel", "2025-04-14", "2025-04-17", "vacation", "approved"),
    ("mateo.garcia", "2025-04-22", "2025-04-25", "vacation", "approved"),
    ("yuki.tanaka", "2025-04-16", "2025-04-17", "vacation", "requested"),
    ("kevin.obrien", "2025-04-22", "2025-04-23", "training", "declined"),
    ("fatima.elamin", "2025-05-05", "2025-05-09", "vacation", "approved"),
    ("rafael.silva", "2025-02-03", "2025-07-31", "parental", "approved"),
]


def build(w: WorldData) -> None:
    departments = w.table("departments", "id", "code", "name", "head_id", "cost_center")
    for d in roster.DEPARTMENTS:
        departments.add(d.id, d.code, d.name, DEPT_HEADS[d.code], d.cost_center)

    employees = w.table(
        "employees",
        "id",
        "first_name",
        "last_name",
        "email",
        "chat_username",
        "title",
        "department_id",
        "manager_id",
        "location",
        "hire_date",
        "status",
    )
    salaries = w.table(
        "salaries", "employee_id", "annual_salary", "currency", "bonus_target", "effective_date"
    )
    for p in PEOPLE:
        dept = roster.DEPT_BY_CODE[p.dept]
        employees.add(
            p.id,
            p.first,
            p.last,
            p.email,
            p.username,
            p.title,
            dept.id,
            p.manager,
            p.location,
            day(p.hired),
            p.status,
        )
        bonus = 20 if p.dept == "SAL" else (15 if p.manager in (None, 1) else 5)
        effective = max(day(p.hired), dt.date(2025, 1, 1))
        salaries.add(p.id, money(p.salary), "EUR", money(bonus), effective)

    holidays = w.table("holidays", "day", "name", "region")
    for date, name, region in roster.HOLIDAYS:
        holidays.add(day(date), name, region)

    _time_off(w)


def _time_off(w: WorldData) -> None:
    table = w.table("time_off", "id", "employee_id", "start_date", "end_date", "kind", "status")
    rows = [(BY_USER[u].id, day(s), day(e), k, st) for u, s, e, k, st in PLANTED_TIME_OFF]
    rng = w.rng
    planted_support = {BY_USER[u].id for u, *_ in PLANTED_TIME_OFF[:4]}
    for p in roster.active():
        for _ in range(rng.choice((0, 1, 1, 2))):
            start = between(rng, dt.date(2025, 1, 6), dt.date(2025, 9, 30))
            # Keep the support team's 14-25 April window exactly as planted.
            if p.dept == "SUP" and start <= dt.date(2025, 4, 30) and start >= dt.date(2025, 4, 7):
                continue
            if p.id in planted_support and start.month == 4:
                continue
            length = rng.choice((0, 1, 2, 4, 4, 9))
            kind = rng.choice(("vacation", "vacation", "vacation", "sick", "training"))
            if kind == "sick" and start > roster.TODAY:
                kind = "vacation"
            status = "approved" if start < roster.TODAY else rng.choice(("approved", "approved", "requested"))
            rows.append((p.id, start, start + dt.timedelta(days=length), kind, status))
    rows.sort(key=lambda r: (r[1], r[0]))
    for i, row in enumerate(rows, 1):
        table.add(i, *row)
