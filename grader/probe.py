"""Probe: how checks read a rollout's final state. A few methods, nothing Docker-specific.

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
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from grader.changes import Changes, read_changes
from grader.chatstate import ChatSnapshot
from grader.docstate import document_dict
from grader.errors import ProbeError, StateError
from grader.sql_session import SqlSession
from mcp_wrappers import PYTHON

WORKSPACE = "/workspace"
# The in-container readers run as `grader` (no capabilities, a read-only database
# role), isolated from anything the agent can write; see docs/security.md.
READER = "grader"
SNAPSHOT = [*PYTHON, "-m", "mcp_wrappers.chat.snapshot"]
READ_DOCUMENT = [*PYTHON, "-m", "mcp_wrappers.libreoffice.read_document"]
DOCUMENT_COPIES = "/var/lib/egym-grader/documents"  # the reader opens copies here, never the agent's files
MAX_OUTPUT_BYTES = 64 << 20  # a reader's whole answer
MAX_FILE_BYTES = 64 << 20
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

    def changes(self) -> Changes | None:
        """What the episode changed since the baseline (grader.changes); None when there is no baseline."""
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
        self._documents: dict[str, dict[str, Any] | ProbeError] = {}
        self._copies = 0
        self._changes: Changes | None | ProbeError = ProbeError("not read yet")
        self._changes_read = False

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
            data = self._run_json(SNAPSHOT, "chat snapshot")
            try:
                self._chat = ChatSnapshot.model_validate(data)
            except ValueError as exc:
                raise ProbeError(
                    f"chat snapshot in {self.sandbox.id[:12]} has an unexpected shape: {exc}".splitlines()[0]
                ) from None
        return self._chat

    def file(self, path: str) -> bytes | None:
        path = workspace_path(path)
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> bytes | None:
        """A regular file's bytes through the Docker API (no code runs in the container); None when absent."""
        try:
            return self.sandbox.read_file(path, max_bytes=MAX_FILE_BYTES)
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as exc:  # over the size limit
            raise ProbeError(f"{path}: {exc}") from None

    def document(self, path: str) -> dict[str, Any]:
        path = workspace_path(path)
        if path not in self._documents:
            self.prefetch([path])
        doc = self._documents[path]
        if isinstance(doc, ProbeError):
            raise ProbeError(str(doc))
        return doc

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        unique = {_sql_key(q, p): (q, p) for q, p in queries}
        wanted = [request for key, request in unique.items() if key not in self._rows]
        if wanted:
            self._fetch(wanted)  # pipelined: one round trip for all of them
        missing = sorted({workspace_path(p) for p in documents} - set(self._documents))
        if missing:
            self._read_documents(missing)

    def _read_documents(self, paths: list[str]) -> None:
        """Copy each file into the grader's own folder, then read all copies in one LibreOffice run."""
        copies: dict[str, str] = {}
        for path in paths:
            try:
                data = self._read(path)
            except ProbeError as exc:
                self._documents[path] = exc
                continue
            if data is None:
                self._documents[path] = {"error": f"no such file: {path}"}
                continue
            self._copies += 1
            copy = f"{DOCUMENT_COPIES}/{self._copies}/{posixpath.basename(path)}"
            self.sandbox.write_file(copy, data, user=READER, mode=0o600)
            copies[copy] = path
        if not copies:
            return
        data = self._run_json([*READ_DOCUMENT, *copies], "read_document")
        if not isinstance(data, dict):
            raise ProbeError(
                f"read_document in {self.sandbox.id[:12]} printed {type(data).__name__}, expected an object"
            )
        for copy, path in copies.items():
            try:
                doc = document_dict(data.get(copy))
            except ValueError as exc:
                self._documents[path] = ProbeError(
                    f"read_document's answer for {path} has an unexpected shape: {str(exc).splitlines()[0]}"
                )
                continue
            if "error" in doc:
                doc["error"] = doc["error"].replace(copy, path)
            self._documents[path] = doc

    def changes(self) -> Changes | None:
        if not self._changes_read:
            try:
                self._changes = read_changes(self.sandbox, self.sql, self.chat)
            except ProbeError as exc:
                self._changes = exc
            self._changes_read = True
        if isinstance(self._changes, ProbeError):
            raise ProbeError(str(self._changes))
        return self._changes

    def _run_json(self, cmd: list[str], what: str) -> Any:
        result = self.sandbox.exec(cmd, user=READER, timeout=self.timeout_s, max_output=MAX_OUTPUT_BYTES)
        where = f"{what} in {self.sandbox.id[:12]}"
        if result.truncated:
            raise ProbeError(f"{where} printed more than {MAX_OUTPUT_BYTES >> 20} MB")
        if not result.ok:
            reason = (
                "timed out"
                if result.timed_out
                else f"exit {result.exit_code}: {result.output.strip()[-300:]}"
            )
            raise ProbeError(f"{where} failed ({reason})".replace("\n", " "))
        return parse_json_output(result.output, where)

    def close(self) -> None:
        if self._sql is not None:
            self._sql.close()
            self._sql = None

    def __enter__(self) -> SandboxProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parse_json_output(output: str, where: str) -> Any:
    """The JSON document a reader printed: the whole output, else its last line that parses.

    (Tools may log to stderr, interleaved.) Malformed or absurdly nested JSON is a ProbeError.
    """
    try:
        return json.loads(output)
    except (ValueError, RecursionError):
        for line in reversed(output.splitlines()):
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                continue
    raise ProbeError(f"{where} printed no readable JSON")


class StaticProbe:
    """A probe over fixed data, for unit tests of checks and for documentation examples.

    `sql` maps a query text to its rows, or to a StateError message (a str).
    """

    def __init__(
        self,
        *,
        sql: Mapping[str, list[dict[str, Any]] | str] | None = None,
        chat: ChatSnapshot | dict | None = None,
        files: Mapping[str, bytes] | None = None,
        documents: Mapping[str, dict[str, Any]] | None = None,
        changes: Changes | None = None,
    ):
        self._sql = dict(sql or {})
        self._changes = changes
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

    def changes(self) -> Changes | None:
        return self._changes
