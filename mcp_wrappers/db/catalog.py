"""What the database holds: tables the agent can see, and one table's columns, keys and indexes."""

from __future__ import annotations

import difflib
from typing import Any

from mcp_wrappers.db.database import Database
from mcp_wrappers.db.errors import DbError

_KINDS = {"r": "table", "p": "table", "v": "view", "m": "materialized view", "f": "foreign table"}
_PRIVS = ("SELECT", "INSERT", "UPDATE", "DELETE")

LIST_SQL = """
SELECT n.nspname, c.relname, c.relkind,
       has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT'),
       has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE'),
       obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
  AND (%s::text IS NULL OR n.nspname = %s)
ORDER BY n.nspname, c.relname
"""
COLUMNS_SQL = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), col_description(a.attrelid, a.attnum)
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
"""
CONSTRAINTS_SQL = """
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s
ORDER BY CASE contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'f' THEN 2 ELSE 3 END, conname
"""
INDEXES_SQL = "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = %s ORDER BY 1"
REFERENCED_BY_SQL = """
SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE confrelid = %s AND contype = 'f' ORDER BY 1, 2
"""


def _display_name(schema: str, name: str) -> str:
    return name if schema == "public" else f"{schema}.{name}"


def list_tables(db: Database, schema: str | None = None) -> list[dict[str, Any]]:
    rows = db.fetch(LIST_SQL, (schema, schema))
    if schema and not rows and not db.fetch("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)):
        raise DbError(f"no schema '{schema}' in this database")
    return [
        {
            "name": _display_name(nsp, rel),
            "schema": nsp,
            "kind": _KINDS[kind],
            "privileges": [p for p, ok in zip(_PRIVS, flags, strict=True) if ok],
            "comment": comment,
        }
        for nsp, rel, kind, *flags, comment in rows
    ]


def _resolve(db: Database, table: str) -> tuple[int, str]:
    """(oid, qualified name) of a table or view; an unknown name lists close matches."""
    try:
        oid = db.fetch("SELECT to_regclass(%s)::oid", (table,))[0][0]
    except DbError:
        oid = None  # a malformed name such as 'a.b.c.d'
    if oid is None:
        names = [t["name"] for t in list_tables(db)]
        close = difflib.get_close_matches(table.lower(), names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use list_tables to see the tables"
        raise DbError(f"no table or view named '{table}'{hint}")
    qualified = db.fetch("SELECT %s::oid::regclass::text", (oid,))[0][0]
    return oid, qualified


def describe_table(db: Database, table: str) -> dict[str, Any]:
    oid, name = _resolve(db, table)
    kind, *flags = db.fetch(
        "SELECT relkind, "
        + ", ".join(f"has_table_privilege(%s::oid, '{p}')" for p in _PRIVS)
        + " FROM pg_class WHERE oid = %s",
        [oid] * len(_PRIVS) + [oid],
    )[0]
    return {
        "table": name,
        "kind": _KINDS.get(kind, kind),
        "privileges": [p for p, ok in zip(_PRIVS, flags, strict=True) if ok],
        "columns": [
            {"name": n, "type": t, "nullable": nullable, "default": default, "comment": comment}
            for n, t, nullable, default, comment in db.fetch(COLUMNS_SQL, (oid,))
        ],
        "constraints": [{"name": n, "definition": d} for n, d in db.fetch(CONSTRAINTS_SQL, (oid,))],
        "indexes": [{"name": n, "definition": d} for n, d in db.fetch(INDEXES_SQL, (oid,))],
        "referenced_by": [
            {"table": t, "name": n, "definition": d} for t, n, d in db.fetch(REFERENCED_BY_SQL, (oid,))
        ],
    }
