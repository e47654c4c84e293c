"""All tools of one episode behind one call: the built-in tools plus every tool the task's MCP servers list.

MCP tools are namespaced by server: `chat.post_message` is the canonical name
everywhere in the gym (trajectories, solutions, rubrics). Policies whose wire
format forbids '.' translate at their own boundary.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from core.trajectory import ToolCall, ToolResult
from gym.harness.builtin_tools import BUILTIN_TOOLS, ToolEnv
from gym.harness.config import HarnessConfig
from gym.harness.faults import FaultInjector
from gym.harness.fileops import FileOps
from gym.harness.shell import PersistentShell
from gym.harness.tool import ToolError
from gym.mcp_client import APP_SERVERS, SERVERS, McpServerConnection
from gym.sandbox.base import Sandbox
from gym.tasks import Task

STARTUP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str  # the server's own name for it
    schema: dict[str, Any]


def servers_for(task: Task, config: HarnessConfig) -> dict[str, list[str]]:
    """Server name -> command for this episode."""
    if config.mcp_servers is not None:
        return dict(config.mcp_servers)
    return {APP_SERVERS[app]: SERVERS[APP_SERVERS[app]] for app in task.apps}


def cap_output(text: str, cap: int) -> str:
    """Keep the head and tail of an over-long output, saying how much was cut."""
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters cut here ...]\n{text[-half:]}"


class Toolbox:
    def __init__(
        self,
        env: ToolEnv,
        connections: dict[str, McpServerConnection],
        mcp_tools: dict[str, McpTool],
        injector: FaultInjector,
        output_cap: int,
    ):
        self.env, self.connections, self.mcp_tools = env, connections, mcp_tools
        self.injector, self.output_cap = injector, output_cap

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, sandbox: Sandbox, task: Task, config: HarnessConfig) -> AsyncIterator[Toolbox]:
        """Start the shell lazily and the MCP servers now (one after the other: each owns a task group)."""
        limits = config.limits_for(task)
        # The shell cuts first, leaving room for its notes, so its own note on what was cut survives.
        shell = PersistentShell(sandbox, cwd=config.workdir, output_cap=config.output_cap_chars - 300)
        env = ToolEnv(sandbox, shell, FileOps(sandbox), limits.tool_timeout_s)
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(shell.close)
            stack.push_async_callback(env.files.close)
            connections, mcp_tools = {}, {}
            for server, cmd in servers_for(task, config).items():
                # start-up may take longer than one call is allowed to (LibreOffice, a cold Python)
                conn = McpServerConnection(
                    sandbox, server, cmd, timeout_s=max(STARTUP_TIMEOUT_S, limits.tool_timeout_s)
                )
                connections[server] = await stack.enter_async_context(conn)
                for item in await conn.list_tools():
                    name = f"{server}.{item.name}"
                    mcp_tools[name] = McpTool(
                        server,
                        item.name,
                        {
                            "type": "function",
                            "function": {
                                "name": name,
                                "description": item.description or "",
                                "parameters": item.input_schema,
                            },
                        },
                    )
            yield cls(env, connections, mcp_tools, FaultInjector(config.faults), config.output_cap_chars)

    def names(self) -> list[str]:
        return [*BUILTIN_TOOLS, *self.mcp_tools]

    def schemas(self) -> list[dict[str, Any]]:
        return [spec.schema() for spec in BUILTIN_TOOLS.values()] + [
            t.schema for t in self.mcp_tools.values()
        ]

    async def call(self, call: ToolCall) -> ToolResult:
        """Execute one tool call. Every failure the model could cause or see comes back as an error result."""
        started = time.monotonic()
        fault = None
        try:
            try:
                arguments = call.parsed_arguments()
            except ValueError as exc:
                raise ToolError(
                    f"{exc}; the call was not run. Arguments received: {call.arguments[:300]}"
                ) from None
            output, is_error, fault = await self._dispatch(call.name, arguments)
        except ToolError as exc:
            output, is_error = f"Error: {exc}", True
        return ToolResult(
            call_id=call.id,
            name=call.name,
            output=cap_output(output, self.output_cap),
            is_error=is_error,
            seconds=round(time.monotonic() - started, 4),
            fault=fault,
        )

    async def _dispatch(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool, str | None]:
        if name in BUILTIN_TOOLS:
            return await BUILTIN_TOOLS[name](self.env, arguments), False, None
        if name in self.mcp_tools:
            target = self.mcp_tools[name]
            fault = self.injector.draw(target.server)
            if fault:
                return fault.message, True, fault.name
            outcome = await self.connections[target.server].call_tool(
                target.name, arguments, timeout_s=self.env.tool_timeout_s
            )
            text = outcome.text or (json.dumps(outcome.structured) if outcome.structured is not None else "")
            return text or "(no output)", outcome.is_error, None
        close = difflib.get_close_matches(name, self.names(), n=3)
        hint = (
            f" Did you mean {', '.join(close)}?" if close else f" Available tools: {', '.join(self.names())}."
        )
        raise ToolError(f"unknown tool '{name}'.{hint}")
