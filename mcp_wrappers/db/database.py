"""Connections to the company database as the OS user's role (peer auth over the unix socket).

Autocommit; every statement is bounded by a server-side statement timeout. A
read query runs inside a READ ONLY transaction; `execute` commits at once.
Calls take a connection from a small pool, so a slow statement never makes the
next call wait, and a cancelled call cancels its statement in PostgreSQL.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from mcp_wrappers.db.errors import PRIVILEGES, DbError, explain
from mcp_wrappers.db.render import json_value
from mcp_wrappers.toolkit import on_cancel


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
        default_factory=lambda: float(os.environ.get("EGYM_DB_STATEMENT_TIMEOUT_S", "30"))
    )
    connect_timeout_s: int = 10
    pool_size: int = 4  # calls running at once; more wait for a connection


class Database:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self._idle: list[psycopg.Connection[Any]] = []
        self._open = 0  # connections in use or idle
        self._free = threading.Condition()  # tools run on worker threads
        self._role: str | None = None

    @property
    def role(self) -> str:
        if self._role is None:
            with self._connection() as conn:
                self._role = conn.info.user
        return self._role

    def _connect(self) -> psycopg.Connection[Any]:
        ms = int(self.settings.statement_timeout_s * 1000)
        try:
            return psycopg.connect(
                dbname=self.settings.dbname,
                autocommit=True,
                connect_timeout=self.settings.connect_timeout_s,
                application_name="egym-mcp-db",
                options=f"-c statement_timeout={ms} -c lock_timeout={ms}",
            )
        except psycopg.OperationalError as exc:
            raise DbError(
                f"cannot connect to database '{self.settings.dbname}': {str(exc).strip()}"
            ) from None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool for one call; a broken one is dropped, not reused."""
        with self._free:
            self._free.wait_for(lambda: self._idle or self._open < self.settings.pool_size)
            conn = self._idle.pop() if self._idle else None
            self._open += conn is None
        try:
            conn = conn or self._connect()
            yield conn
        finally:
            healthy = (
                conn is not None
                and not conn.broken
                and conn.info.transaction_status == TransactionStatus.IDLE
            )
            with self._free:
                if healthy:
                    stale: list[psycopg.Connection[Any]] = []
                    self._idle.append(conn)
                else:  # dropped, or never opened: PostgreSQL has likely dropped the idle ones too (a restart)
                    stale, self._idle = self._idle + ([conn] if conn is not None else []), []
                    self._open -= len(stale) + (conn is None)
                self._free.notify_all()
            for each in stale:
                each.close()

    @contextmanager
    def _cursor(self, sql: str) -> Iterator[psycopg.Cursor[Any]]:
        """A cursor; database errors become DbError. A cancelled call cancels its statement."""
        with self._connection() as conn:
            try:
                with on_cancel(conn.cancel_safe), conn.cursor() as cur:
                    yield cur
            except psycopg.Error as exc:
                raise explain(exc, sql, conn.info.user, lambda table: _held(conn, table)) from None

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
        with self._free:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
        for conn in idle:
            conn.close()


def _held(conn: psycopg.Connection[Any], table: str) -> list[str]:
    """The role's privileges on a table (asked on the same connection, after the failed statement)."""
    if conn.closed:
        return []
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s)::oid", (table,))
            oid = cur.fetchone()[0]
            if oid is None:
                return []
            checks = ", ".join(f"has_table_privilege(%s, '{p}')" for p in PRIVILEGES)
            cur.execute(f"SELECT {checks}", [oid] * len(PRIVILEGES))
            return [p for p, ok in zip(PRIVILEGES, cur.fetchone(), strict=True) if ok]
    except psycopg.Error:
        return []


def _collect(cur: psycopg.Cursor[Any], limit: int) -> Result:
    if cur.description is None:
        return Result(cur.statusmessage or "", cur.rowcount)
    rows = cur.fetchmany(limit + 1)
    return Result(
        cur.statusmessage or "",
        cur.rowcount,
        [d.name for d in cur.description],
        [[json_value(v) for v in row] for row in rows[:limit]],
        len(rows) > limit,
    )
