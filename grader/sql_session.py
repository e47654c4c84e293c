"""One persistent, read-only `psql` session inside a sandbox, spoken to over an exec's stdio.

A `docker exec` costs tens of milliseconds, so one exec per query would make a
200-item rubric take seconds; a Python client in the container would spend most
of a second importing its driver. `psql` starts in milliseconds, and PostgreSQL
itself turns each result into JSON: every query is wrapped as
`SELECT coalesce(json_agg(q), '[]') FROM (<query>) q`, followed by an `\\echo`
of a random marker that ends the answer. Numerics arrive as JSON numbers,
dates and times as ISO text.

Parameters (`%(name)s`, or `%s` with a list) are bound on the host as quoted
SQL literals by psycopg's own quoting, like psycopg's client-side cursor.
Queries must be SELECT-like (SELECT, WITH, VALUES, TABLE).
"""

from __future__ import annotations

import json
import queue
import re
import secrets
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import sql as pgsql

from grader.errors import ProbeError, StateError

# Read-only session, a statement timeout, and no NOTICE chatter in the output. The
# role itself (`grader`, a member of pg_read_all_data) can read everything and write nothing.
PGOPTIONS = "-c default_transaction_read_only=on -c statement_timeout=20s -c client_min_messages=warning"
ANSWER_TIMEOUT_S = 60.0
MAX_ANSWER_BYTES = 32 << 20  # one query's JSON; more is the agent flooding a table, not an answer
# psql as OS user `grader` (peer authentication: the role `grader`), its errors on stdout, in order.
PSQL = [
    "/bin/bash",
    "-c",
    'exec /usr/lib/postgresql/15/bin/psql -X -q -A -t -v ON_ERROR_STOP=0 -d "$1" 2>&1',
    "psql",
]
OVERSIZE = "\x00egym: line over the size limit\x00"  # the pump's note (compared by identity)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%|%s")
_ERROR_PREFIX = re.compile(r"^psql:<stdin>:\d+: ")


def _literal(value: Any) -> str:
    if isinstance(value, dict):
        value = json.dumps(value)
    return pgsql.Literal(value).as_string(None)


def bind(query: str, params: Mapping[str, Any] | Sequence[Any] | None) -> str:
    """The query with its placeholders replaced by quoted literals (no placeholders are read without params)."""
    if params is None:
        return query
    positional = iter(params) if not isinstance(params, Mapping) else None

    def replace(match: re.Match) -> str:
        token = match.group(0)
        if token == "%%":
            return "%"
        if token == "%s":
            if positional is None:
                raise ValueError("the query uses %s but params is an object; write %(name)s")
            try:
                return _literal(next(positional))
            except StopIteration:
                raise ValueError("more %s placeholders than params") from None
        if not isinstance(params, Mapping):
            raise ValueError(f"the query uses %({match.group(1)})s but params is a list")
        if match.group(1) not in params:
            raise ValueError(f"no param {match.group(1)!r} (params: {', '.join(params) or 'none'})")
        return _literal(params[match.group(1)])

    return _PLACEHOLDER.sub(replace, query)


def _parse(lines: list[str]) -> list[dict[str, Any]] | StateError:
    text = "\n".join(lines).strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    errors = [_ERROR_PREFIX.sub("", line) for line in lines if "ERROR:" in line] or lines[:1] or ["no result"]
    return StateError("query failed: " + " ".join(errors[0].replace("ERROR:", "").split()))


class SqlSession:
    """Started at construction; `query` is thread-safe (one request in flight at a time)."""

    def __init__(self, sandbox, database: str = "company"):
        self.sandbox = sandbox
        self._stdio = sandbox.open_stdio([*PSQL, database], user="grader", env={"PGOPTIONS": PGOPTIONS})
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._broken: str | None = None
        threading.Thread(target=self._pump, daemon=True, name="egym-sql-reader").start()

    def _pump(self) -> None:
        """Read stdout into lines until the stream ends or a line outgrows MAX_ANSWER_BYTES (a daemon thread)."""
        buffer = bytearray()
        try:
            while chunk := self._stdio.read():
                scan_from = len(buffer)  # only the new bytes can hold a newline
                buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", max(start, scan_from))) >= 0:
                    self._lines.put(buffer[start:end].decode(errors="replace"))
                    start = end + 1
                del buffer[:start]
                if len(buffer) > MAX_ANSWER_BYTES:
                    self._lines.put(OVERSIZE)
                    break
        except OSError:
            pass
        self._lines.put(None)

    def _answer(self, marker: str) -> list[str]:
        lines: list[str] = []
        size = 0
        while True:
            try:
                line = self._lines.get(timeout=ANSWER_TIMEOUT_S)
            except queue.Empty:
                self._broken = (
                    f"no answer within {ANSWER_TIMEOUT_S:g}s (an unbalanced quote or comment in a query?)"
                )
                self.close()
                raise ProbeError(f"SQL session in {self.sandbox.id[:12]}: {self._broken}") from None
            if line is None:
                self._broken = "psql ended: " + (" ".join(lines[-2:]) or "no output")
                raise ProbeError(f"SQL session in {self.sandbox.id[:12]}: {self._broken}")
            if line == marker:
                return lines
            size += len(line)
            if size > MAX_ANSWER_BYTES or line is OVERSIZE:
                self._broken = f"an answer over {MAX_ANSWER_BYTES >> 20} MB"
                self.close()
                raise ProbeError(f"SQL session in {self.sandbox.id[:12]}: {self._broken}")
            lines.append(line)

    def query(
        self, sql: str, params: Mapping[str, Any] | Sequence[Any] | None = None
    ) -> list[dict[str, Any]]:
        """Rows as dicts; StateError when PostgreSQL rejects the statement (the session is read-only)."""
        (answer,) = self.query_many([(sql, params)])
        if isinstance(answer, Exception):
            raise answer
        return answer

    def query_many(self, requests: Sequence[tuple[str, Any]]) -> list[list[dict[str, Any]] | Exception]:
        """Answers in order, each rows or the StateError/ValueError it raised; pipelined: one round trip in all."""
        if self._broken:
            raise ProbeError(f"SQL session in {self.sandbox.id[:12]} is unusable: {self._broken}")
        out: list[list[dict[str, Any]] | Exception | None] = [None] * len(requests)
        markers: list[tuple[int, str]] = []
        script = []
        for index, (sql, params) in enumerate(requests):
            try:
                body = bind(sql, params).strip().rstrip(";").rstrip()
            except ValueError as exc:
                out[index] = exc
                continue
            marker = f"--egym-{secrets.token_hex(8)}--"
            markers.append((index, marker))
            script.append(
                f"SELECT coalesce(json_agg(q), '[]'::json) FROM (\n{body}\n) AS q;\n\\echo {marker}\n"
            )
        with self._lock:
            if script:
                self._stdio.write("".join(script).encode())
            for index, marker in markers:
                out[index] = _parse(self._answer(marker))
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self._stdio.close()
