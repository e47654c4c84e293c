"""SLA policies and three months of support tickets."""

from __future__ import annotations

import datetime as dt

from . import catalog
from .model import WorldData, between
from .roster import SUPPORT_ENGINEERS, TODAY

JONAS = 23
GLOBEX = 1
PRIORITY_WEIGHTS = ("urgent",) * 1 + ("high",) * 4 + ("normal",) * 9 + ("low",) * 6
SOURCES = ("email", "email", "portal", "portal", "phone", "chat")


def build(w: WorldData) -> None:
    slas = w.table("sla_policies", "priority", "first_response_hours", "resolution_hours", "description")
    for row in catalog.SLAS:
        slas.add(*row)
    tickets = w.table(
        "support_tickets",
        "id",
        "customer_id",
        "contact_id",
        "subject",
        "description",
        "priority",
        "status",
        "assignee_id",
        "source",
        "created_at",
        "first_response_at",
        "resolved_at",
    )
    rows = sorted(_random_tickets(w) + _globex_open(w), key=lambda r: (r[8], r[0]))
    for i, row in enumerate(rows, 1):
        tickets.add(i, *row)


def _contact(w: WorldData, customer_id: int) -> int | None:
    ids = [c["id"] for c in w["contacts"].dicts() if c["customer_id"] == customer_id]
    return w.rng.choice(ids) if ids else None


def _random_tickets(w: WorldData) -> list[tuple]:
    rng = w.rng
    hours = {p: (f, r) for p, f, r, _ in catalog.SLAS}
    active = [c["id"] for c in w["customers"].dicts() if c["status"] == "active" and c["id"] != GLOBEX]
    rows = []
    for _ in range(300):
        customer = rng.choice(active)
        priority = rng.choice(PRIORITY_WEIGHTS)
        subject = rng.choice(catalog.TICKET_SUBJECTS[priority])
        day_ = between(rng, dt.date(2025, 1, 2), TODAY - dt.timedelta(days=3))
        created = dt.datetime.combine(day_, dt.time(rng.randint(7, 18), rng.randint(0, 59)))
        first, resolve = hours[priority]
        breach = rng.random() < 0.13
        delay = first * (rng.uniform(1.15, 3.0) if breach else rng.uniform(0.1, 0.9))
        responded = created + dt.timedelta(minutes=int(delay * 60))
        age_days = (TODAY - day_).days
        if age_days > 10 or rng.random() < 0.5:
            resolved = responded + dt.timedelta(minutes=int(resolve * 60 * rng.uniform(0.2, 1.3)))
            status = "closed" if age_days > 20 else "resolved"
            resolved = min(resolved, dt.datetime.combine(TODAY, dt.time(8)) - dt.timedelta(days=1))
            resolved = max(resolved, responded)
        else:
            resolved, status = None, rng.choice(("open", "open", "pending"))
        assignee = rng.choice(SUPPORT_ENGINEERS + [JONAS] if rng.random() < 0.1 else SUPPORT_ENGINEERS)
        if assignee == 28 and day_ < dt.date(2025, 1, 6):
            assignee = 27
        rows.append(
            (
                customer,
                _contact(w, customer),
                subject,
                "",
                priority,
                status,
                assignee,
                rng.choice(SOURCES),
                created,
                responded,
                resolved,
            )
        )
    return rows


def _globex_open(w: WorldData) -> list[tuple]:
    """Globex has exactly three unresolved tickets (the manager-question task counts them)."""
    contact = _contact(w, GLOBEX)
    at = dt.datetime
    return [
        (
            GLOBEX,
            contact,
            "Forecast module shows wrong totals",
            "Q1 forecast totals differ from the sum of regions.",
            "high",
            "open",
            27,
            "email",
            at(2025, 3, 18, 9, 12),
            at(2025, 3, 18, 11, 40),
            None,
        ),
        (
            GLOBEX,
            contact,
            "Scheduled reports not sent",
            "Weekly board report did not arrive on Monday.",
            "normal",
            "pending",
            25,
            "portal",
            at(2025, 3, 31, 8, 5),
            at(2025, 3, 31, 13, 30),
            None,
        ),
        (
            GLOBEX,
            contact,
            "Question about seat licences",
            "Can unused seats move to the renewal?",
            "low",
            "open",
            24,
            "email",
            at(2025, 4, 2, 14, 50),
            at(2025, 4, 3, 10, 15),
            None,
        ),
        (
            GLOBEX,
            contact,
            "Export to Excel times out",
            "Large exports fail after 60 s.",
            "high",
            "closed",
            26,
            "phone",
            at(2025, 2, 4, 10, 0),
            at(2025, 2, 4, 12, 20),
            at(2025, 2, 5, 16, 0),
        ),
        (
            GLOBEX,
            contact,
            "Filter on region not saved",
            "",
            "normal",
            "resolved",
            28,
            "portal",
            at(2025, 3, 3, 15, 30),
            at(2025, 3, 3, 17, 0),
            at(2025, 3, 5, 9, 45),
        ),
    ]
