"""What every in-container MCP server shares: tool results, error translation, annotations, server set-up,
and a stdio loop that never loses an answer.

A tool never shows the model a traceback: the server's own error type becomes a
tool error with its message, anything unexpected a tool error naming its type.

The stdio loop (`run_stdio`) differs from the SDK's in two ways: a line that is
not JSON, or not a JSON-RPC message, is answered with a JSON-RPC error (the
SDK drops it, and the client would wait for an answer until it times out); and
when stdin closes, calls already read finish and are answered before the
process exits (the SDK cancels them).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, BinaryIO, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from mcp_wrappers import __version__

T = TypeVar("T")
log = logging.getLogger("egym.mcp")

# Tool annotations (MCP hints for clients). A read-only tool changes nothing, so repeating it is harmless.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def writes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """A tool that changes state: `destructive` if it may delete or overwrite what is there (not only add),
    `idempotent` if calling it again with the same arguments changes nothing more."""
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent)


def result(text: str, structured: dict[str, Any]) -> CallToolResult:
    """Text for the model plus the same facts as structured content for programs."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def tool_errors(
    expected: type[Exception] | tuple[type[Exception], ...],
    log: logging.Logger,
    explain: Callable[[Any], str] = str,
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: `expected` errors become tool errors (`explain(exc)`), others too, with their type."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> T:
            try:
                return fn(*args, **kwargs)
            except expected as exc:
                raise ToolError(explain(exc)) from None
            except ToolError:
                raise
            except Exception as exc:
                log.exception("tool %s failed", fn.__name__)
                raise ToolError(f"{fn.__name__} failed: {type(exc).__name__}: {exc}") from None

        return wrapper

    return decorate


# -- cancellation -----------------------------------------------------------------------------------


class _Call:
    """One running tool call: what to do if its client cancels it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: list[Callable[[], None]] = []
        self.cancelled = False

    def cancel(self) -> None:
        # Hooks run under the lock: once `on_cancel` has left its block, its hook can no longer run
        # (a database connection back in the pool must not be cancelled for another call).
        with self._lock:
            self.cancelled = True
            for hook in self._hooks:
                try:
                    hook()
                except Exception:
                    log.exception("cancel hook failed")


_CALL: ContextVar[_Call | None] = ContextVar("egym_tool_call", default=None)


@contextlib.contextmanager
def on_cancel(hook: Callable[[], None]) -> Iterator[None]:
    """While the block runs, cancelling the current tool call runs `hook` (on another thread).

    For work that would otherwise outlive a call nobody waits for, e.g. a SQL
    statement: the hook stops it. Raises ToolError when the call is already cancelled.
    """
    call = _CALL.get()
    if call is None:  # not inside a tool call (tests, the grader's CLI)
        yield
        return
    with call._lock:
        if call.cancelled:
            raise ToolError("the call was cancelled")
        call._hooks.append(hook)
    try:
        yield
    finally:
        with call._lock:
            call._hooks.remove(hook)


def _threaded(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """A sync tool as an async one whose worker thread a cancelled call does not wait for.

    The SDK runs sync tools on a thread it waits for even after the client cancelled,
    so the call's resources stay busy until the work ends by itself; here the
    cancellation returns at once and the call's `on_cancel` hooks stop the work.
    """

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> T:
        call = _Call()
        token = _CALL.set(call)  # the worker thread runs in a copy of this context
        try:
            return await anyio.to_thread.run_sync(
                functools.partial(fn, *args, **kwargs), abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            # A hook may block on I/O (a cancel request to PostgreSQL): never on the event loop.
            threading.Thread(target=call.cancel, name="egym-cancel", daemon=True).start()
            raise
        finally:
            _CALL.reset(token)

    return run


# -- server -----------------------------------------------------------------------------------------


def make_server(
    name: str,
    instructions: str,
    tools: object,
    annotations: Mapping[str, ToolAnnotations],
    close: Callable[[], None],
    *,
    structured_output: bool | None = None,
) -> MCPServer:
    """An MCP server whose tools are `tools`' methods named in `annotations` (docstring = description).

    `close` runs at shutdown; `structured_output` as in `MCPServer.add_tool` (None: from the return type).
    """

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            close()

    server = MCPServer(name, instructions=instructions, version=__version__, lifespan=lifespan)
    for tool_name, hints in annotations.items():
        method = getattr(tools, tool_name)
        server.add_tool(
            _threaded(method),
            name=tool_name,
            description=inspect.cleandoc(method.__doc__ or ""),
            annotations=hints,
            structured_output=structured_output,
        )
    return server


def run_stdio(server: MCPServer) -> None:
    """Serve `server` on stdin/stdout until stdin closes and every call read by then is answered."""
    anyio.run(_serve_stdio, server)


def _take_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The wire as private files; fd 0 and 1 then point at /dev/null and stderr, so a child process
    or a stray print can neither read requests nor corrupt answers (as the SDK's stdio_server does)."""
    wire_in, wire_out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def parse_line(line: bytes) -> tuple[types.JSONRPCMessage | None, types.JSONRPCError | None]:
    """(the JSON-RPC message on the line, None), or (None, the error that answers it: JSON-RPC 2.0 section 5.1)."""
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False), None
    except ValidationError:
        pass
    try:
        raw = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        return None, _error(None, types.PARSE_ERROR, "Parse error: the line is not valid JSON")
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return None, _error(
        request_id,
        types.INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
    )


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


async def _serve_stdio(server: MCPServer) -> None:
    wire_in, wire_out = _take_stdio()
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage](16)
    unanswered: set[int | str] = set()  # ids of requests read and not answered yet
    all_answered = anyio.Event()
    all_answered.set()

    def settle(request_id: int | str | None) -> None:
        if request_id is not None:
            unanswered.discard(coerce_request_id(request_id))
            if not unanswered:
                all_answered.set()

    async def read_stdin() -> None:
        nonlocal all_answered
        async with to_server, to_client.clone() as errors:
            while line := await anyio.to_thread.run_sync(wire_in.readline, abandon_on_cancel=True):
                if not line.strip():
                    continue
                message, error = parse_line(line)
                if error is not None:
                    await errors.send(SessionMessage(error))
                    continue
                if isinstance(message, types.JSONRPCRequest):
                    if not unanswered:
                        all_answered = anyio.Event()
                    unanswered.add(coerce_request_id(message.id))
                elif (
                    isinstance(message, types.JSONRPCNotification)
                    and message.method == "notifications/cancelled"
                ):
                    settle(
                        cancelled_request_id_from_params(message.params)
                    )  # a cancelled call is never answered
                await to_server.send(SessionMessage(message))
            await all_answered.wait()  # EOF: calls in flight finish and answer before the server stops

    async def write_stdout() -> None:
        client_gone = False
        async with from_server:
            async for item in from_server:
                message = item.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    settle(message.id)
                if client_gone:
                    continue  # keep draining so the server never blocks on a dead pipe
                data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                try:
                    await anyio.to_thread.run_sync(_write, wire_out, data)
                except OSError:
                    client_gone = True

    lowlevel = server._lowlevel_server  # MCPServer serves stdio only through the SDK's own transport
    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdin)
        tg.start_soon(write_stdout)
        await lowlevel.run(from_client, to_client, lowlevel.create_initialization_options())


def _write(out: BinaryIO, data: bytes) -> None:
    out.write(data)
    out.flush()
