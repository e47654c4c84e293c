"""One persistent, read-only PostgreSQL session inside a sandbox, spoken to over an exec's stdio.

A `docker exec` costs tens of milliseconds; a 200-item rubric with one exec per
query would take seconds. Instead one small Python process (psycopg, already in
the container's venv) runs as the `postgres` superuser and answers JSON lines:
request `{"q": sql, "p": params}`, reply `{"rows": [...]}` or `{"error": "..."}`.
The script is passed on the command line; nothing is written into the container.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from grader.errors import ProbeError, StateError

# Runs inside the container. Read-only session, statement timeout, client-side
# parameter binding (`%(name)s`, like psycopg2) so untyped literals compare
# naturally. Values PostgreSQL returns become JSON: numerics as numbers,
# dates and times as ISO text.
SCRIPT = r"""
import datetime, decimal, json, sys
import psycopg
conn = psycopg.connect(dbname=sys.argv[1], autocommit=True, cursor_factory=psycopg.ClientCursor)
conn.execute("SET default_transaction_read_only = on")
conn.execute("SET statement_timeout = '20s'")
def enc(v):
    if isinstance(v, decimal.Decimal):
        return int(v) if v.is_finite() and v == v.to_integral_value() else float(v)
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, memoryview)):
        return bytes(v).hex()
    return str(v)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    try:
        with conn.cursor() as cur:
            cur.execute(req["q"], req.get("p"))
            cols = [d.name for d in cur.description] if cur.description else []
            out = {"rows": [dict(zip(cols, r)) for r in cur.fetchall()] if cols else []}
    except (psycopg.Error, ValueError, TypeError, KeyError, IndexError) as e:
        out = {"error": " ".join(str(e).split())[:500] or type(e).__name__}
    sys.stdout.write(json.dumps(out, default=enc) + "\n")
    sys.stdout.flush()
"""


class SqlSession:
    """Started on first use; `query` is thread-safe (one request in flight at a time)."""

    def __init__(self, sandbox, database: str = "company"):
        self.sandbox = sandbox
        self._stdio = sandbox.open_stdio(["python3", "-u", "-c", SCRIPT, database], user="postgres")
        self._buffer = b""
        self._lock = threading.Lock()
        ready = self._read_line()
        if ready.get("ready") is not True:
            raise ProbeError(f"SQL session in {sandbox.id[:12]} did not start: {ready}")

    def _read_line(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = self._stdio.read()
            if not chunk:
                tail = self._stdio.stderr_tail.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise ProbeError(f"SQL session in {self.sandbox.id[:12]} ended: {tail[0]}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            raise ProbeError(f"SQL session in {self.sandbox.id[:12]} answered garbage: {line[:200]!r}") from None

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts; StateError when PostgreSQL rejects the statement (it is read-only)."""
        request = json.dumps({"q": sql, "p": dict(params) if params is not None else None}, default=str)
        with self._lock:
            self._stdio.write(request.encode() + b"\n")
            reply = self._read_line()
        if "error" in reply:
            raise StateError(f"query failed: {reply['error']}")
        return reply["rows"]

    def close(self) -> None:
        self._stdio.close()
