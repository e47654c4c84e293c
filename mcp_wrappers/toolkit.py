"""What every in-container MCP server shares: tool results, error translation, server set-up.

A tool never shows the model a traceback: the server's own error type becomes a
tool error with its message, anything unexpected a tool error naming its type.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

T = TypeVar("T")


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


def make_server(
    name: str, instructions: str, tools: object, tool_names: tuple[str, ...], close: Callable[[], None]
) -> MCPServer:
    """An MCP server whose tools are `tools`' methods (docstring = description); `close` runs at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            close()

    server = MCPServer(name, instructions=instructions, lifespan=lifespan)
    for tool_name in tool_names:
        method = getattr(tools, tool_name)
        server.add_tool(method, name=tool_name, description=inspect.cleandoc(method.__doc__ or ""))
    return server
