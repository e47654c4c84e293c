"""PostgreSQL errors as one message a model can act on: what failed, on which object, what to do."""

from __future__ import annotations

import re
from collections.abc import Callable

import psycopg
from psycopg import errors as pg


class DbError(Exception):
    """A failure shown to the model as a tool error."""


PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
_DENIED = re.compile(
    r'permission denied for (table|view|materialized view|sequence|schema|relation) "?([^"\s]+)"?'
)
_TARGET = re.compile(
    r"^\s*(insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?([^\s(]+)", re.IGNORECASE
)
_VERB_PRIVILEGE = {
    "insert into": "INSERT",
    "update": "UPDATE",
    "delete from": "DELETE",
    "truncate": "TRUNCATE",
}


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.DOTALL)


def needed_privileges(sql: str, table: str) -> list[str]:
    """The table privileges `sql` needs on `table` (a best guess from the statement's verb and shape)."""
    match = _TARGET.match(_strip_comments(sql))
    if not match or _bare(match.group(2)) != _bare(table):
        return ["SELECT"]  # the table is only read (a join, a sub-query, a plain SELECT)
    verb = re.sub(r"\s+", " ", match.group(1).lower())
    privilege = _VERB_PRIVILEGE["truncate" if verb.startswith("truncate") else verb]
    rest = _strip_comments(sql)[match.end() :]
    reads = re.search(r"\b(where|returning|from|using|on conflict)\b", rest, re.IGNORECASE)
    return [privilege, "SELECT"] if reads and privilege in ("UPDATE", "DELETE", "INSERT") else [privilege]


def _bare(name: str) -> str:
    return name.split(".")[-1].strip('"').lower()


def explain(exc: psycopg.Error, sql: str, role: str, held: Callable[[str], list[str]]) -> DbError:
    """A DbError for `exc`; `held(table)` lists the role's privileges on a table (for permission errors)."""
    if isinstance(exc, pg.InsufficientPrivilege):
        return _permission(exc, sql, role, held)
    if isinstance(exc, pg.QueryCanceled):
        return DbError(
            f"statement cancelled: {_primary(exc)}. Narrow it (WHERE, LIMIT, indexed columns) and retry."
        )
    if isinstance(exc, pg.ReadOnlySqlTransaction):
        return DbError("the query tool is read-only: use the execute tool for INSERT, UPDATE, DELETE or DDL")
    if isinstance(exc, psycopg.OperationalError):
        return DbError(f"database connection failed: {_primary(exc)}")
    hint = f" (hint: {exc.diag.message_hint})" if exc.diag.message_hint else ""
    detail = f" (detail: {exc.diag.message_detail})" if exc.diag.message_detail else ""
    return DbError(f"ERROR: {str(exc).strip()}{detail}{hint}")


def _permission(exc: psycopg.Error, sql: str, role: str, held: Callable[[str], list[str]]) -> DbError:
    match = _DENIED.search(_primary(exc))
    if not match:
        return DbError(f"permission denied for role {role}: {_primary(exc)}")
    kind, name = match.groups()
    if kind == "schema":
        return DbError(
            f"permission denied: role {role} has no USAGE privilege on schema {name}, "
            "so it cannot use any table in it"
        )
    has = held(name)
    missing = [p for p in needed_privileges(sql, name) if p not in has]
    lacks = (
        (" and ".join(missing) + (" privileges" if len(missing) > 1 else " privilege"))
        if missing
        else "a privilege this statement needs"
    )
    return DbError(
        f"permission denied for {kind} {name}: role {role} lacks {lacks} on it "
        f"(it holds: {', '.join(has) or 'none'})"
    )


def _primary(exc: psycopg.Error) -> str:
    return (exc.diag.message_primary or str(exc)).strip()
