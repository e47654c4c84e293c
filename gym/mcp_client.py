"""MCP over `docker exec -i` stdio: the host side of every in-container MCP server.

`docker_stdio_transport` plays the role of the SDK's `stdio_client`, but the
process lives in the sandbox and its pipes are a docker exec attach socket.
`McpServerConnection` wraps a `ClientSession` with the two calls the harness
and the grader need: list tools, call a tool.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from core.errors import SandboxError
from gym.sandbox.base import Sandbox, StdioStream, stderr_said
from mcp_wrappers import PYTHON
from mcp_wrappers.apps import app


def server_command(name: str) -> list[str]:
    """How the sandbox starts app `name`'s MCP server (mcp_wrappers/<name>/app.toml)."""
    return [*PYTHON, "-m", app(name).server]


MAX_MESSAGE_BYTES = 64 << 20


@contextlib.asynccontextmanager
async def docker_stdio_transport(stdio: StdioStream) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's two message streams over a process's stdio in the sandbox (closed on exit)."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)

    async def reader() -> None:
        buffer = b""
        async with read_writer:
            while True:
                chunk = await anyio.to_thread.run_sync(stdio.read, abandon_on_cancel=True)
                if not chunk:
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                if (
                    len(buffer) > MAX_MESSAGE_BYTES
                ):  # no server of ours says this much: do not hold it in memory
                    await read_writer.send(ValueError(f"an MCP message over {MAX_MESSAGE_BYTES >> 20} MB"))
                    return
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        msg = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        item: SessionMessage | Exception = SessionMessage(msg)
                    except ValueError as exc:
                        item = exc
                    try:
                        await read_writer.send(item)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

    async def writer() -> None:
        async with write_reader:
            async for message in write_reader:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                try:
                    await anyio.to_thread.run_sync(stdio.write, data)
                except OSError:  # the stream was closed mid-write (e.g. a cancel notice sent at shutdown)
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            stdio.close()
            tg.cancel_scope.cancel()


@dataclass
class ToolOutcome:
    text: str
    is_error: bool
    structured: Any = None


class McpServerConnection:
    """One live MCP session to a server inside a sandbox. Use as an async context manager."""

    def __init__(
        self,
        sandbox: Sandbox,
        name: str,
        cmd: list[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        timeout_s: float = 60,
    ):
        self.sandbox, self.name, self.env, self.timeout_s = sandbox, name, env, timeout_s
        self.cmd = cmd or server_command(name)
        self._stack = contextlib.AsyncExitStack()
        self.session: ClientSession | None = None

    async def __aenter__(self) -> McpServerConnection:
        stdio = None
        try:
            stdio = await anyio.to_thread.run_sync(lambda: self.sandbox.open_stdio(self.cmd, env=self.env))
            streams = await self._stack.enter_async_context(docker_stdio_transport(stdio))
            self.session = await self._stack.enter_async_context(
                ClientSession(*streams, read_timeout_seconds=self.timeout_s)
            )
            with anyio.fail_after(self.timeout_s):
                await self.session.initialize()
        except BaseException as exc:
            await self._stack.aclose()
            if isinstance(exc, Exception) and not isinstance(exc, SandboxError):
                said = stderr_said(stdio)
                raise SandboxError(
                    f"MCP server '{self.name}' ({' '.join(self.cmd)}) did not start: {exc}"
                    + (f"; it wrote: {said}" if said else "")
                ) from None
            raise
        return self

    async def __aexit__(self, *exc) -> None:
        await self._stack.aclose()

    async def list_tools(self) -> list[types.Tool]:
        assert self.session is not None, "use `async with McpServerConnection(...)`"
        tools: list[types.Tool] = []
        cursor = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout_s: float | None = None
    ) -> ToolOutcome:
        """Call a tool; protocol-level failures come back as an error outcome, not an exception."""
        assert self.session is not None, "use `async with McpServerConnection(...)`"
        try:
            result = await self.session.call_tool(
                tool, arguments, read_timeout_seconds=timeout_s or self.timeout_s
            )
        except Exception as exc:  # noqa: BLE001 - a broken tool call is an observation for the model
            return ToolOutcome(f"Error: {type(exc).__name__}: {exc}", True)
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return ToolOutcome(text, bool(result.is_error), result.structured_content)
