"""One connection to the company database as the OS user's role (peer auth over the unix socket).

Autocommit; every statement is bounded by a server-side statement timeout. A
read query runs inside a READ ONLY transaction; `execute` commits at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

from mcp_wrappers.postgres.errors import PRIVILEGES, DbError, explain
from mcp_wrappers.postgres.render import json_value


@dataclass
class Result:
    """One statement's outcome: its command tag, rows affected, and rows returned (if any)."""

    status: str
    rowcount: int
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False


@dataclass
class Settings:
    dbname: str = field(default_factory=lambda: os.environ.get("PGDATABASE", "company"))
    statement_timeout_s: float = field(
        default_factory=lambda: float(os.environ.get("EGYM_DB_STATEMENT_TIMEOUT_S", "30")))
    connect_timeout_s: int = 10


class Database:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()  # one statement at a time: tools run on worker threads

    @property
    def role(self) -> str:
        return self._connection().info.user

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            ms = int(self.settings.statement_timeout_s * 1000)
            try:
                self._conn = psycopg.connect(
                    dbname=self.settings.dbname, autocommit=True, connect_timeout=self.settings.connect_timeout_s,
                    application_name="egym-mcp-db", options=f"-c statement_timeout={ms} -c lock_timeout={ms}")
            except psycopg.OperationalError as exc:
                raise DbError(f"cannot connect to database '{self.settings.dbname}': {str(exc).strip()}") from None
        return self._conn

    @contextmanager
    def _cursor(self, sql: str) -> Iterator[psycopg.Cursor[Any]]:
        """A cursor; database errors become DbError, a dropped connection is reopened on the next call."""
        with self._lock:
            conn = self._connection()
            try:
                with conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                if conn.closed or isinstance(exc, psycopg.OperationalError):
                    self._conn = None
                raise explain(exc, sql, conn.info.user, self._held) from None

    def _held(self, table: str) -> list[str]:
        """The role's privileges on a table (asked on the same connection, after the failed statement)."""
        assert self._conn is not None
        try:
            with self._conn.cursor() as cur:
                cur.execute("SELECT to_regclass(%s)::oid", (table,))
                oid = cur.fetchone()[0]
                if oid is None:
                    return []
                checks = ", ".join(f"has_table_privilege(%s, '{p}')" for p in PRIVILEGES)
                cur.execute(f"SELECT {checks}", [oid] * len(PRIVILEGES))
                return [p for p, ok in zip(PRIVILEGES, cur.fetchone(), strict=True) if ok]
        except psycopg.Error:
            return []

    def query(self, sql: str, limit: int) -> Result:
        """Run a read-only query; at most `limit` rows come back (`truncated` says whether more exist)."""
        with self._cursor(sql) as cur, cur.connection.transaction():
            cur.execute("SET TRANSACTION READ ONLY")
            cur.execute(sql)
            while cur.nextset():  # several statements: the last one's rows are the answer
                pass
            return _collect(cur, limit)

    def execute(self, sql: str, limit: int = 100) -> list[Result]:
        """Run one or more statements with autocommit; one Result per statement."""
        with self._cursor(sql) as cur:
            cur.execute(sql)
            results = [_collect(cur, limit)]
            while cur.nextset():
                results.append(_collect(cur, limit))
            return results

    def fetch(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a catalog query (internal SQL with parameters)."""
        with self._cursor(sql) as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _collect(cur: psycopg.Cursor[Any], limit: int) -> Result:
    if cur.description is None:
        return Result(cur.statusmessage or "", cur.rowcount)
    rows = cur.fetchmany(limit + 1)
    return Result(cur.statusmessage or "", cur.rowcount, [d.name for d in cur.description],
                  [[json_value(v) for v in row] for row in rows[:limit]], len(rows) > limit)
