"""The facts every Acme family draws from: the world acmegen generates (the same one tasks/acme/initial_state holds)."""

import re

from generate import build_world

AGENT = "jordan.lee"  # the agent's chat username: only its posts are its claims

# A table the SQL reads or writes: FROM customers, JOIN employees e, UPDATE invoices, INTO payments.
TABLE_NAME = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_]+)", re.IGNORECASE)
HINTED_LEVELS = (0,)


def world_data():
    return build_world()


def prompt_hint(world, instance, level: int) -> str:
    """Level 0 names the tables its reference solution uses, with their columns.

    A level-0 task is one or two calls for a 135M-parameter model, which cannot guess a schema:
    without the names nearly every query it writes fails (bench/results/warmstart.json). Higher
    levels leave finding the schema (db.list_tables, db.describe_table) to the agent.
    """
    if level not in HINTED_LEVELS:
        return ""
    sql = " ".join(
        step["args"]["sql"] for step in instance.solution if step.get("tool") in ("db.query", "db.execute")
    )
    tables = [t for t in dict.fromkeys(m.lower() for m in TABLE_NAME.findall(sql)) if t in world.tables]
    if not tables:
        return ""
    described = "; ".join(f"{t}({', '.join(world[t].columns)})" for t in tables)
    return f"Database tables: {described}."


def claims(world) -> dict:
    """The kinds of value Acme answers assert (grader.claims), for every family to name by kind.

    Lexicons hold every value the agent could read, so an answer that lists other customers or
    other people asserts wrong values of the kind and is charged for each. A family adds kinds of
    its own (a count of what it asks about, a verdict) in its Instance's `claims`.
    """

    def lexicon(table: str, column: str, **extra) -> dict:
        return {"values": sorted({str(row[column]) for row in world[table].dicts()}), **extra}

    people = sorted({f"{p['first_name']} {p['last_name']}" for p in world["employees"].dicts()})
    return {
        "author": AGENT,
        "kinds": {
            "amount": {"extract": "amount"},
            "date": {"extract": "date"},
            "email": {"extract": "email"},
            "employee": {"values": people},
            "contact": lexicon("contacts", "name"),
            "customer": lexicon("customers", "name"),
            "product": lexicon("products", "name"),
            "department": lexicon("departments", "name"),
            "title": lexicon("employees", "title"),
            "cost_center": lexicon("departments", "cost_center", case_sensitive=True),
            "country": lexicon("customers", "country", case_sensitive=True),
            "segment": lexicon("customers", "segment"),
            "stage": lexicon("pipeline_stages", "name"),
            "invoice": {"regex": r"\bINV-\d{4}-\d{4}\b", "case_sensitive": True},
            "sku": {"regex": r"\b[A-Z]{3}-\d{3}\b", "case_sensitive": True},
            "invoice_status": {
                "values": [
                    "draft",
                    "sent",
                    "paid",
                    {"value": "partially_paid", "regex": r"\bpartially[ _-]paid\b"},
                    "void",
                ]
            },
            "ticket_status": {"values": ["new", "open", "pending", "resolved", "closed"]},
            "priority": {"values": ["low", "normal", "high", "urgent"]},
        },
    }
