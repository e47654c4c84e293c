"""Customers, contacts, products, price lists, pipeline stages and deals (with their product lines)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from . import catalog
from .model import WorldData, between, day
from .roster import ACCOUNT_EXECUTIVES, TODAY
from .sqlwrite import money

SANJAY = 41  # terminated 2025-01-31; his accounts now belong to other AEs
CHURNED = {"Delta Textiles", "Sapphire Jewels"}


def build(w: WorldData) -> None:
    _customers(w)
    _products(w)
    _deals(w)


def _customers(w: WorldData) -> None:
    rng = w.rng
    customers = w.table(
        "customers",
        "id",
        "name",
        "industry",
        "country",
        "segment",
        "account_manager_id",
        "status",
        "created_on",
    )
    contacts = w.table("contacts", "id", "customer_id", "name", "email", "role", "is_primary")
    contact_id = 0
    for i, (name, industry, country, segment) in enumerate(catalog.CUSTOMERS, 1):
        manager = ACCOUNT_EXECUTIVES[(i - 1) % len(ACCOUNT_EXECUTIVES)]
        status = "churned" if name in CHURNED else "active"
        created = between(rng, dt.date(2019, 1, 1), dt.date(2024, 5, 31))
        customers.add(i, name, industry, country, segment, manager, status, created)
        slug = "".join(ch for ch in name.lower().split()[0] if ch.isalpha())
        used: set[str] = set()
        for k in range(rng.choice((1, 2, 2, 3))):
            first, last = rng.choice(catalog.FIRST_NAMES), rng.choice(catalog.LAST_NAMES)
            if last in used:
                continue
            used.add(last)
            contact_id += 1
            role = "CFO" if k == 0 and segment == "enterprise" else rng.choice(catalog.CONTACT_ROLES)
            contacts.add(
                contact_id, i, f"{first} {last}", f"{first}.{last}@{slug}.example".lower(), role, k == 0
            )


def _products(w: WorldData) -> None:
    products = w.table("products", "id", "sku", "name", "category", "unit", "active")
    for i, (sku, name, category, unit, _price, active) in enumerate(catalog.PRODUCTS, 1):
        products.add(i, sku, name, category, unit, active)
    lists = w.table("price_lists", "id", "name", "currency", "valid_from", "valid_to")
    items = w.table("price_list_items", "price_list_id", "product_id", "unit_price")
    for pl_id, name, currency, start, end, factor in catalog.PRICE_LISTS:
        lists.add(pl_id, name, currency, day(start), day(end) if end else None)
        for i, (_sku, _name, _cat, _unit, price, active) in enumerate(catalog.PRODUCTS, 1):
            if active or pl_id == 1:
                items.add(pl_id, i, money(Decimal(price) * Decimal(factor)))


def price_on(w: WorldData, product_id: int, date: dt.date) -> Decimal:
    """Standard list price valid on `date`."""
    pl = 1 if date.year == 2024 else 2
    for pl_id, pid, price in w["price_list_items"].rows:
        if pl_id == pl and pid == product_id:
            return price
    raise KeyError(product_id)


def _lines(w: WorldData, segment: str, date: dt.date) -> list[tuple[int, Decimal, Decimal]]:
    """(product_id, quantity, unit_price) for one deal."""
    rng = w.rng
    seats = {"smb": (5, 25), "mid-market": (20, 80), "enterprise": (60, 250)}[segment]
    licence = {"smb": 1, "mid-market": 2, "enterprise": 3}[segment]
    picks = [(licence, Decimal(rng.randint(*seats) // 5 * 5 or 5))]
    if rng.random() < 0.6:
        picks.append((8 if segment != "enterprise" else 9, Decimal(1)))
    if rng.random() < 0.4:
        picks.append((rng.choice((11, 12, 13)), Decimal(rng.choice((1, 2, 3, 5)))))
    if rng.random() < 0.3:
        picks.append((rng.choice((15, 16)), Decimal(rng.choice((1, 2)))))
    return [(pid, qty, price_on(w, pid, date)) for pid, qty in picks]


def _deals(w: WorldData) -> None:
    rng = w.rng
    stages = w.table("pipeline_stages", "id", "name", "position", "probability", "is_closed")
    for row in catalog.STAGES:
        stages.add(*row)
    customers = w["customers"].dicts()
    products = w["products"].dicts()
    deals = w.table(
        "deals",
        "id",
        "customer_id",
        "owner_id",
        "title",
        "stage_id",
        "amount",
        "currency",
        "created_on",
        "expected_close",
        "closed_on",
    )
    plans = []
    for owner in [*ACCOUNT_EXECUTIVES, SANJAY]:
        last = dt.date(2024, 10, 31) if owner == SANJAY else dt.date(2025, 4, 4)
        mine = [c for c in customers if c["account_manager_id"] == owner] or customers[4::5]
        for _ in range(58 if owner != SANJAY else 14):
            customer = rng.choice(mine if owner != SANJAY else customers[4::5])
            if customer["status"] == "churned":
                continue
            plans.append((between(rng, dt.date(2024, 6, 3), last), owner, customer))
    plans.sort(key=lambda p: (p[0], p[1], p[2]["id"]))
    for deal_id, (created, owner, customer) in enumerate(plans, 1):
        cycle = rng.randint(14, 75 if owner != SANJAY else 60)
        close = created + dt.timedelta(days=cycle)
        lines = _lines(w, customer["segment"], created)
        amount = money(sum(q * p for _, q, p in lines))
        main = next(p["name"] for p in products if p["id"] == lines[0][0])
        title = f"{customer['name']} - {main} ({int(lines[0][1])} seats)"
        if close < TODAY - dt.timedelta(days=2):
            stage, closed = (catalog.WON if rng.random() < 0.62 else catalog.LOST), close
        else:
            progress = (TODAY - created).days / cycle
            stage, closed = min(5, 1 + int(progress * 5)), None
        deals.add(deal_id, customer["id"], owner, title, stage, amount, "EUR", created, close, closed)
        w.deal_lines[deal_id] = lines
    _planted_deals(w, len(plans))


def _planted_deals(w: WorldData, last_id: int) -> None:
    """Deals that tasks refer to: the Globex renewal under negotiation, the Initech deal paid twice."""
    deals = w["deals"]
    globex = [
        (3, Decimal(140), Decimal("1150.00")),
        (9, Decimal(1), Decimal("5400.00")),
        (4, Decimal(3), Decimal("2400.00")),
    ]
    amount = money(sum(q * p for _, q, p in globex))
    deals.add(
        last_id + 1,
        1,
        14,
        "Globex Industries - Enterprise renewal 2025 (140 seats)",
        5,
        amount,
        "EUR",
        day("2025-02-10"),
        day("2025-04-30"),
        None,
    )
    w.deal_lines[last_id + 1] = globex
    initech = [(2, Decimal(40), Decimal("780.00")), (8, Decimal(1), Decimal("1800.00"))]
    deals.add(
        last_id + 2,
        2,
        15,
        "Initech GmbH - Acme Insights Professional (40 seats)",
        catalog.WON,
        money(sum(q * p for _, q, p in initech)),
        "EUR",
        day("2025-01-13"),
        day("2025-02-20"),
        day("2025-02-20"),
    )
    w.deal_lines[last_id + 2] = initech
    expansion = [(4, Decimal(2), Decimal("2400.00")), (12, Decimal(6), Decimal("1250.00"))]
    deals.add(
        last_id + 3,
        1,
        14,
        "Globex Industries - Data Connector expansion",
        catalog.WON,
        money(sum(q * p for _, q, p in expansion)),
        "EUR",
        day("2025-01-20"),
        day("2025-02-14"),
        day("2025-02-14"),
    )
    w.deal_lines[last_id + 3] = expansion
    w.facts["globex_renewal_deal"] = last_id + 1
    w.facts["globex_expansion_deal"] = last_id + 3
    w.facts["initech_deal"] = last_id + 2
