"""MCP servers that never lose an answer (issue 18), for the db, chat and office servers.

Malformed JSON-RPC is answered with a JSON-RPC error and the server keeps serving;
calls in flight when stdin closes are answered before the server exits; a
cancelled call stops its SQL and a slow statement never holds up the next call;
`serverInfo.version` is set; every tool carries truthful annotations and every
parameter a description.

Driven with the official SDK client (`mcp.ClientSession`) over `docker exec -i`
stdio (`sdk_session` below: the transport keeps every raw line the server wrote
and the stream itself, so a test can also send bytes no SDK client would send or
close stdin), plus one raw-bytes test without any client.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import queue
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

import mcp_wrappers
from gym.mcp_client import server_command

pytestmark = pytest.mark.docker

PG_SLEEPS = (
    "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(30)%' "
    "AND pid <> pg_backend_pid()"
)

# server: (read-only tools, writers that may delete or overwrite, writers that are safe to repeat)
HINTS = {
    "db": ({"list_tables", "describe_table", "query"}, {"execute"}, set()),
    "chat": (
        {"list_channels", "read_channel", "read_thread", "search_messages", "get_user", "list_users"},
        set(),
        {"add_reaction", "create_channel", "add_channel_member"},
    ),
    "office": (
        {"list_files", "read_sheet", "read_document"},
        {"create_document", "write_cells", "replace_text", "save_document", "export_document"},
        {"create_document", "write_cells", "add_sheet", "rename_sheet", "save_document", "export_document"},
    ),
}


@dataclass
class Wire:
    """An SDK session plus what lies under it: the raw stream and every line the server wrote."""

    stdio: Any
    session: ClientSession | None = None
    init: types.InitializeResult | None = None
    lines: list[bytes] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # methods of the messages written, in order
    closed: anyio.Event = field(default_factory=anyio.Event)  # the server's stdout ended

    def errors(self) -> list[dict[str, Any]]:
        return [m for m in map(json.loads, self.lines) if "error" in m]


@contextlib.asynccontextmanager
async def sdk_session(
    sandbox, server: str, env: dict[str, str] | None = None, timeout_s: float = 20
) -> AsyncIterator[Wire]:
    """`mcp.ClientSession` to `server` in the sandbox, initialized (`timeout_s`: its default call timeout)."""
    stdio = await anyio.to_thread.run_sync(lambda: sandbox.open_stdio(server_command(server), env=env))
    wire = Wire(stdio)
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](100)

    async def read() -> None:
        buffer = b""
        async with to_session:
            while chunk := await anyio.to_thread.run_sync(stdio.read, abandon_on_cancel=True):
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    wire.lines.append(line)
                    # An error with id null answers no request of the SDK's: it would drop it anyway.
                    await to_session.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))
        wire.closed.set()

    async def write() -> None:
        async with from_session:
            async for item in from_session:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                with contextlib.suppress(OSError):  # stdin already closed by the test
                    await anyio.to_thread.run_sync(stdio.write, data)
                    wire.sent.append(getattr(item.message, "method", "response"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        try:
            async with ClientSession(
                session_reads, session_writes, read_timeout_seconds=timeout_s
            ) as session:
                wire.session = session
                wire.init = await session.initialize()
                yield wire
        finally:
            stdio.close()
            tg.cancel_scope.cancel()


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _psql(sandbox, sql: str) -> str:
    out = sandbox.exec(
        ["/usr/lib/postgresql/15/bin/psql", "-X", "-tA", "-c", sql], user="postgres", timeout=30
    )
    assert out.ok, out.output
    return out.output.strip()


async def _until(check, timeout_s: float = 20) -> None:
    """Poll `check()` (run on a thread) until it is true; fail after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not await anyio.to_thread.run_sync(check):
        assert time.monotonic() < deadline, f"{check.__doc__ or check} did not happen within {timeout_s} s"
        await anyio.sleep(0.2)


# -- 1. malformed JSON-RPC ---------------------------------------------------------------------------


class _Lines:
    """The server's stdout as JSON lines, read on a thread (a sync test has no event loop)."""

    def __init__(self, stdio):
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stdio,), daemon=True).start()

    def _pump(self, stdio) -> None:
        buffer = b""
        while chunk := stdio.read():
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                self._queue.put(line)
        self._queue.put(None)

    def next(self, timeout_s: float = 60) -> dict[str, Any]:
        line = self._queue.get(timeout=timeout_s)
        assert line is not None, "the server closed its stdout"
        return json.loads(line)


GARBAGE = [  # (line, expected error code, expected id)
    (b"this is not json", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', -32700, None),  # cut short
    (b"\xff\xfe{}", -32700, None),  # not UTF-8
    (b'{"hello": "world"}', -32600, None),
    (b"[1, 2, 3]", -32600, None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": 42}', -32600, 7),
    (b'{"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": "nope"}', -32600, "x"),
]


def _request(request_id: int, method: str, params: dict | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method} | ({"params": params} if params else {})
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("server", ["db", "chat", "office"])
def test_malformed_lines_get_json_rpc_errors_and_the_server_keeps_serving(db_sandbox, server):
    stdio = db_sandbox.open_stdio(server_command(server))
    try:
        lines = _Lines(stdio)
        stdio.write(b"".join(line + b"\n" for line, _, _ in GARBAGE))
        answers = [lines.next() for _ in GARBAGE]
        assert [(a["error"]["code"], a["id"]) for a in answers] == [(code, rid) for _, code, rid in GARBAGE]
        assert all(a["jsonrpc"] == "2.0" and a["error"]["message"] for a in answers)

        stdio.write(
            _request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            )
        )
        assert lines.next()["result"]["serverInfo"]["name"] == server
        stdio.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        stdio.write(b"{oops\n" + _request(2, "tools/list"))
        after = [lines.next(), lines.next()]
        assert {a.get("id") for a in after} == {None, 2}
        assert next(a for a in after if a["id"] is None)["error"]["code"] == -32700
        assert next(a for a in after if a["id"] == 2)["result"]["tools"]
    finally:
        stdio.close()


async def test_an_sdk_session_survives_garbage_on_the_wire(db_sandbox):
    async with sdk_session(db_sandbox, "db") as wire:
        before = await wire.session.call_tool("query", {"sql": "SELECT 'before' AS w"})
        assert not before.is_error and before.structured_content["rows"] == [["before"]]
        await anyio.to_thread.run_sync(wire.stdio.write, b"]]] not json\n")
        await _until(lambda: any(e["error"]["code"] == -32700 and e["id"] is None for e in wire.errors()))
        after = await wire.session.call_tool("query", {"sql": "SELECT 'after' AS w"})
        assert not after.is_error and after.structured_content["rows"] == [["after"]]


# -- 2. stdin closed while calls are in flight --------------------------------------------------------


def _hanging_chat_server(db_sandbox) -> dict[str, str]:
    """A port that accepts connections and answers nothing for 4 s (a chat call in flight that long): its env."""
    code = (
        "import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        "s.bind(('127.0.0.1', 8099)); s.listen(); time.sleep(4)"
    )
    started = db_sandbox.exec(
        ["bash", "-c", f'{mcp_wrappers.PYTHON[0]} -c "{code}" </dev/null >/dev/null 2>&1 &'], timeout=30
    )
    assert started.ok, started.output
    return {"MATTERMOST_URL": "http://127.0.0.1:8099", "MATTERMOST_TOKEN": "test-token"}


@pytest.mark.parametrize(
    "server, tool, arguments, expected",
    [
        ("db", "query", {"sql": "SELECT 42 AS answer FROM pg_sleep(2)"}, "42"),
        (
            "office",
            "create_document",
            {"path": "eof-check.xlsx"},
            "Created spreadsheet eof-check.xlsx",
        ),  # starts LibreOffice
        ("chat", "list_channels", {}, "did not answer"),
    ],
)
async def test_calls_in_flight_are_answered_after_stdin_closes(db_sandbox, server, tool, arguments, expected):
    env = _hanging_chat_server(db_sandbox) if server == "chat" else None
    async with sdk_session(db_sandbox, server, env) as wire:
        await (
            wire.session.list_tools()
        )  # the SDK checks a result against the tool's output schema: fetch it now
        results: list[types.CallToolResult] = []

        async def call() -> None:
            results.append(await wire.session.call_tool(tool, arguments))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await _until(lambda: "tools/call" in wire.sent)
            wire.stdio.close_stdin()  # EOF right behind the request: the call is still running
        assert expected in _text(results[0]), _text(results[0])
        with anyio.fail_after(60):
            await wire.closed.wait()  # and then the server exits
    if server == "office":
        assert db_sandbox.exec(["test", "-s", "/workspace/eof-check.xlsx"], timeout=30).ok


# -- 3. cancellation and the connection pool ---------------------------------------------------------


@pytest.mark.parametrize("tool, how", [("query", "timeout"), ("execute", "cancel")])
async def test_a_cancelled_call_stops_its_sql_and_the_next_call_answers(db_sandbox, tool, how):
    # The server's statement timeout stays at its 30 s default: only the cancellation can end the sleep early.
    async with sdk_session(db_sandbox, "db", timeout_s=20) as wire:
        sleep = {"sql": "SELECT pg_sleep(30)"}
        if how == "timeout":  # the SDK gives up after 2 s and tells the server (notifications/cancelled)
            with pytest.raises(MCPError, match="timed out"):
                await wire.session.call_tool(tool, sleep, read_timeout_seconds=2)
        else:  # the caller cancels
            with anyio.move_on_after(2) as scope:
                await wire.session.call_tool(tool, sleep)
            assert scope.cancelled_caught
        await _until(lambda: "notifications/cancelled" in wire.sent)

        started = time.monotonic()
        again = await wire.session.call_tool("query", {"sql": "SELECT 1 AS one"})  # 20 s call timeout
        assert not again.is_error and again.structured_content["rows"] == [[1]]
        assert time.monotonic() - started < 15, "the next call waited for the cancelled one"

        def sleep_gone() -> bool:
            """the pg_sleep(30) ending in PostgreSQL"""
            return _psql(db_sandbox, PG_SLEEPS) == "0"

        await _until(sleep_gone, timeout_s=10)


async def test_a_slow_query_does_not_hold_up_the_next_call(db_sandbox):
    async with sdk_session(db_sandbox, "db", timeout_s=60) as wire:
        slow: list[types.CallToolResult] = []

        async def sleep() -> None:
            slow.append(await wire.session.call_tool("query", {"sql": "SELECT 7 AS seven FROM pg_sleep(30)"}))

        def sleeping() -> bool:
            """the slow query running in PostgreSQL"""
            return _psql(db_sandbox, PG_SLEEPS) == "1"

        async with anyio.create_task_group() as tg:
            tg.start_soon(sleep)
            await _until(sleeping)
            quick = await wire.session.call_tool("query", {"sql": "SELECT 1 AS one"})
            assert not quick.is_error and quick.structured_content["rows"] == [[1]]
            assert not slow, "the quick call answered only after the slow one"
            tg.cancel_scope.cancel()  # cancel the slow call: it must not outlive the test
        await _until(lambda: "notifications/cancelled" in wire.sent)
    await _until(lambda: _psql(db_sandbox, PG_SLEEPS) == "0", timeout_s=10)


async def test_connections_postgres_dropped_are_replaced(db_sandbox):
    async with sdk_session(db_sandbox, "db") as wire:
        async with anyio.create_task_group() as tg:  # two calls at once: the pool holds two connections
            for _ in range(2):
                tg.start_soon(wire.session.call_tool, "query", {"sql": "SELECT pg_sleep(1)"})
        killed = _psql(
            db_sandbox,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'egym-mcp-db'",
        )
        assert killed == "2"
        first = await wire.session.call_tool("query", {"sql": "SELECT 1 AS one"})
        assert not first.is_error or "database connection failed" in _text(first), _text(first)
        second = await wire.session.call_tool("query", {"sql": "SELECT 2 AS two"})
        assert not second.is_error and second.structured_content["rows"] == [[2]], _text(second)


# -- 4 and 5. serverInfo.version, tool annotations, parameter descriptions ---------------------------


@pytest.mark.parametrize("server", ["db", "chat", "office"])
async def test_version_annotations_and_parameter_descriptions(db_sandbox, server):
    async with sdk_session(db_sandbox, server) as wire:
        assert wire.init.server_info.name == server
        assert (
            wire.init.server_info.version
            == mcp_wrappers.__version__
            == importlib.metadata.version("enterprise-gym")
        )
        tools = (await wire.session.list_tools()).tools

    read_only, destructive, idempotent = HINTS[server]
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, f"{tool.name} has no annotations"
        got = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        if tool.name in read_only:
            assert got == (True, False, True), tool.name
        else:
            assert got == (False, tool.name in destructive, tool.name in idempotent), tool.name
        undocumented = [
            name
            for name, prop in tool.input_schema.get("properties", {}).items()
            if not prop.get("description", "").strip()
        ]
        assert not undocumented, f"{tool.name}: parameters without a description: {undocumented}"
    assert read_only | destructive | idempotent <= {t.name for t in tools}
