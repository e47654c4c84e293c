"""PostgreSQL storage: the schema (created on start when missing) and one serialised connection.

One connection behind a lock is enough: one agent and one grader talk to a
rollout's chat service, and serialising requests makes every handler a
transaction without thinking about concurrent writers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
  id text PRIMARY KEY, username text UNIQUE NOT NULL, email text UNIQUE NOT NULL,
  first_name text NOT NULL DEFAULT '', last_name text NOT NULL DEFAULT '', nickname text NOT NULL DEFAULT '',
  position text NOT NULL DEFAULT '', roles text NOT NULL DEFAULT 'system_user',
  password_hash text NOT NULL DEFAULT '', create_at bigint NOT NULL, update_at bigint NOT NULL,
  delete_at bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS tokens (
  id text PRIMARY KEY, digest text UNIQUE NOT NULL, user_id text NOT NULL REFERENCES users(id),
  kind text NOT NULL, description text NOT NULL DEFAULT '', is_active boolean NOT NULL DEFAULT true,
  create_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS teams (
  id text PRIMARY KEY, name text UNIQUE NOT NULL, display_name text NOT NULL, description text NOT NULL DEFAULT '',
  type text NOT NULL DEFAULT 'O', email text NOT NULL DEFAULT '', invite_id text NOT NULL,
  create_at bigint NOT NULL, update_at bigint NOT NULL, delete_at bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS team_members (
  team_id text NOT NULL REFERENCES teams(id), user_id text NOT NULL REFERENCES users(id),
  roles text NOT NULL DEFAULT 'team_user', delete_at bigint NOT NULL DEFAULT 0, PRIMARY KEY (team_id, user_id));
CREATE TABLE IF NOT EXISTS channels (
  id text PRIMARY KEY, team_id text NOT NULL DEFAULT '', type text NOT NULL, name text NOT NULL,
  display_name text NOT NULL DEFAULT '', header text NOT NULL DEFAULT '', purpose text NOT NULL DEFAULT '',
  creator_id text NOT NULL DEFAULT '', create_at bigint NOT NULL, update_at bigint NOT NULL,
  delete_at bigint NOT NULL DEFAULT 0, last_post_at bigint NOT NULL DEFAULT 0,
  last_root_post_at bigint NOT NULL DEFAULT 0, total_msg_count bigint NOT NULL DEFAULT 0,
  total_msg_count_root bigint NOT NULL DEFAULT 0, UNIQUE (team_id, name));
CREATE TABLE IF NOT EXISTS channel_members (
  channel_id text NOT NULL REFERENCES channels(id), user_id text NOT NULL REFERENCES users(id),
  roles text NOT NULL DEFAULT 'channel_user', last_viewed_at bigint NOT NULL DEFAULT 0,
  msg_count bigint NOT NULL DEFAULT 0, last_update_at bigint NOT NULL, PRIMARY KEY (channel_id, user_id));
CREATE TABLE IF NOT EXISTS posts (
  id text PRIMARY KEY, channel_id text NOT NULL REFERENCES channels(id), user_id text NOT NULL REFERENCES users(id),
  root_id text NOT NULL DEFAULT '', message text NOT NULL DEFAULT '', type text NOT NULL DEFAULT '',
  props jsonb NOT NULL DEFAULT '{}', file_ids jsonb NOT NULL DEFAULT '[]', create_at bigint NOT NULL,
  update_at bigint NOT NULL, edit_at bigint NOT NULL DEFAULT 0, delete_at bigint NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS posts_channel_time ON posts (channel_id, create_at DESC);
CREATE INDEX IF NOT EXISTS posts_root ON posts (root_id);
ALTER TABLE posts ADD COLUMN IF NOT EXISTS is_pinned boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS statuses (
  user_id text PRIMARY KEY REFERENCES users(id), status text NOT NULL, manual boolean NOT NULL DEFAULT false,
  last_activity_at bigint NOT NULL);
CREATE TABLE IF NOT EXISTS reactions (
  post_id text NOT NULL REFERENCES posts(id), user_id text NOT NULL REFERENCES users(id),
  emoji_name text NOT NULL, create_at bigint NOT NULL, PRIMARY KEY (post_id, user_id, emoji_name));
CREATE TABLE IF NOT EXISTS files (
  id text PRIMARY KEY, creator_id text NOT NULL REFERENCES users(id), channel_id text NOT NULL,
  post_id text NOT NULL DEFAULT '', name text NOT NULL, extension text NOT NULL DEFAULT '',
  size bigint NOT NULL, mime_type text NOT NULL DEFAULT '', data bytea NOT NULL,
  create_at bigint NOT NULL, update_at bigint NOT NULL, delete_at bigint NOT NULL DEFAULT 0);
"""

Row = dict[str, Any]


class Database:
    """A single async connection; `transaction()` hands it out to one request at a time."""

    def __init__(self, conn: psycopg.AsyncConnection):
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, dsn: str) -> Database:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, row_factory=dict_row)
        async with conn.transaction():
            # Other local roles (the agent's) must not open this database and read tokens or posts.
            await conn.execute("SELECT pg_advisory_xact_lock(8065)")
            await conn.execute(SCHEMA)
            dbname = conn.info.dbname
            await conn.execute(f'REVOKE CONNECT ON DATABASE "{dbname}" FROM PUBLIC')
        return cls(conn)

    async def close(self) -> None:
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        async with self._lock, self._conn.transaction():
            yield Tx(self._conn)


class Tx:
    """Query helpers bound to the connection inside one transaction."""

    def __init__(self, conn: psycopg.AsyncConnection):
        self.conn = conn

    async def one(self, sql: str, *params: Any) -> Row | None:
        cur = await self.conn.execute(sql, params or None)
        return await cur.fetchone()

    async def all(self, sql: str, *params: Any) -> list[Row]:
        cur = await self.conn.execute(sql, params or None)
        return await cur.fetchall()

    async def run(self, sql: str, *params: Any) -> int:
        cur = await self.conn.execute(sql, params or None)
        return cur.rowcount

    async def value(self, sql: str, *params: Any) -> Any:
        row = await self.one(sql, *params)
        return next(iter(row.values())) if row else None


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value)
