"""The facts every Acme family draws from: the world acmegen generates (the same one tasks/acme/initial_state holds)."""

import re

from generate import build_world

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
