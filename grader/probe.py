"""Probe: how checks read a rollout's final state. Four methods, nothing Docker-specific.

Two kinds of failure, kept apart on purpose:
- ProbeError: the state could not be read (container gone, chat service down,
  exec timed out). Infrastructure noise: the item becomes `error`.
- StateError: the state was read and cannot answer (a query fails because the
  agent dropped a table, a document is corrupt). That is the agent's doing: the
  item `fail`s with the message as evidence. An agent must not be able to turn
  a failing check into an excused `error` by breaking things.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from grader.chatstate import ChatSnapshot
from grader.errors import ProbeError, StateError
from grader.sql_session import SqlSession

WORKSPACE = "/workspace"
__all__ = ["Probe", "ProbeError", "SandboxProbe", "StateError", "StaticProbe", "workspace_path"]


class Probe(Protocol):
    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts, run read-only as the database superuser. StateError when PostgreSQL rejects it."""
        ...

    def chat(self) -> ChatSnapshot:
        """The whole chat workspace (users, channels, posts)."""
        ...

    def file(self, path: str) -> bytes | None:
        """A file's bytes, None when absent. Relative paths are under /workspace."""
        ...

    def document(self, path: str) -> dict[str, Any]:
        """A spreadsheet or text document as read by LibreOffice; `{"error": ...}` when unreadable or absent."""
        ...

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        """Hint: these documents and (query, params) will be read; a probe may load them in one go."""
        ...


def _sql_key(query: str, params: Any) -> str:
    return json.dumps([query, params], sort_keys=True, default=str)


def workspace_path(path: str) -> str:
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(WORKSPACE, path))


class SandboxProbe:
    """Reads a live sandbox's final state, caching each source once per probe (one probe per grade).

    SQL goes through one persistent read-only session (no exec per query), the
    chat snapshot is taken once, and documents are read in one LibreOffice run.
    """

    def __init__(self, sandbox, *, timeout_s: float = 120):
        self.sandbox = sandbox
        self.timeout_s = timeout_s
        self._sql: SqlSession | None = None
        self._rows: dict[str, list[dict[str, Any]] | Exception] = {}
        self._chat: ChatSnapshot | None = None
        self._files: dict[str, bytes | None] = {}
        self._documents: dict[str, dict[str, Any]] = {}

    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        # Many items share a query (one per expected value): ask PostgreSQL once.
        key = _sql_key(query, params)
        if key not in self._rows:
            self._fetch([(query, params)])
        rows = self._rows[key]
        if isinstance(rows, Exception):
            raise type(rows)(*rows.args)  # a fresh exception each time: no traceback piling up
        return [dict(row) for row in rows]

    def _fetch(self, requests: list[tuple[str, Any]]) -> None:
        if self._sql is None:
            self._sql = SqlSession(self.sandbox)
        for (query, params), answer in zip(requests, self._sql.query_many(requests), strict=True):
            self._rows[_sql_key(query, params)] = answer

    def chat(self) -> ChatSnapshot:
        if self._chat is None:
            data = self._run_json(["python3", "-m", "mcp_wrappers.mattermost.snapshot"], "chat snapshot")
            try:
                self._chat = ChatSnapshot.model_validate(data)
            except ValueError as exc:
                raise ProbeError(f"chat snapshot in {self.sandbox.id[:12]} has an unexpected shape: {exc}".splitlines()[0]) from None
        return self._chat

    def file(self, path: str) -> bytes | None:
        path = workspace_path(path)
        if path not in self._files:
            try:
                self._files[path] = self.sandbox.read_file(path)
            except (FileNotFoundError, IsADirectoryError):
                self._files[path] = None
        return self._files[path]

    def document(self, path: str) -> dict[str, Any]:
        path = workspace_path(path)
        if path not in self._documents:
            self.prefetch([path])
        return self._documents[path]

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        unique = {_sql_key(q, p): (q, p) for q, p in queries}
        wanted = [request for key, request in unique.items() if key not in self._rows]
        if wanted:
            self._fetch(wanted)  # pipelined: one round trip for all of them
        missing = sorted({workspace_path(p) for p in documents} - set(self._documents))
        if not missing:
            return
        data = self._run_json(["python3", "-m", "mcp_wrappers.libreoffice.read_document", *missing], "read_document")
        if not isinstance(data, dict):
            raise ProbeError(f"read_document in {self.sandbox.id[:12]} printed {type(data).__name__}, expected an object")
        for path in missing:
            doc = data.get(path)
            self._documents[path] = doc if isinstance(doc, dict) else {"error": "not returned by read_document"}

    def _run_json(self, cmd: list[str], what: str) -> Any:
        result = self.sandbox.exec(cmd, user="root", timeout=self.timeout_s)
        if not result.ok:
            reason = "timed out" if result.timed_out else f"exit {result.exit_code}: {result.output.strip()[-300:]}"
            raise ProbeError(f"{what} in {self.sandbox.id[:12]} failed ({reason})".replace("\n", " "))
        try:
            # Tools may log to stderr (interleaved); the JSON document is the last line that parses.
            return json.loads(result.output)
        except ValueError:
            for line in reversed(result.output.splitlines()):
                try:
                    return json.loads(line)
                except ValueError:
                    continue
        raise ProbeError(f"{what} in {self.sandbox.id[:12]} printed no JSON ({shlex.join(cmd)})")

    def close(self) -> None:
        if self._sql is not None:
            self._sql.close()
            self._sql = None

    def __enter__(self) -> SandboxProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class StaticProbe:
    """A probe over fixed data, for unit tests of checks and for documentation examples.

    `sql` maps a query text to its rows, or to a StateError message (a str).
    """

    def __init__(self, *, sql: Mapping[str, list[dict[str, Any]] | str] | None = None,
                 chat: ChatSnapshot | dict | None = None, files: Mapping[str, bytes] | None = None,
                 documents: Mapping[str, dict[str, Any]] | None = None):
        self._sql = dict(sql or {})
        self._chat = ChatSnapshot.model_validate(chat or {})
        self._files = {workspace_path(k): v for k, v in (files or {}).items()}
        self._documents = {workspace_path(k): v for k, v in (documents or {}).items()}
        self.prefetched: list[str] = []
        self.prefetched_queries: list[tuple[str, Any]] = []

    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        if query not in self._sql:
            raise StateError(f"query not known to this StaticProbe: {query}")
        rows = self._sql[query]
        if isinstance(rows, str):
            raise StateError(rows)
        return rows

    def chat(self) -> ChatSnapshot:
        return self._chat

    def file(self, path: str) -> bytes | None:
        return self._files.get(workspace_path(path))

    def document(self, path: str) -> dict[str, Any]:
        return self._documents.get(workspace_path(path), {"error": f"{path}: no such file"})

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        self.prefetched.extend(documents)
        self.prefetched_queries.extend(queries)
