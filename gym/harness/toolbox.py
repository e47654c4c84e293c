"""All tools of one episode behind one call: the built-in tools plus every tool the task's MCP servers list.

MCP tools are namespaced by server: `chat.post_message` is the canonical name
everywhere in the gym (trajectories, solutions, rubrics). Policies whose wire
format forbids '.' translate at their own boundary.

A server is started when the episode opens only the first time its image and
command are seen in this process; after that its tool list is known, and it
starts at the episode's first call to it. Most episodes call one server of the
task's few, and some none (a cold Python server costs about half a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import difflib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import mcp_types

from core.trajectory import ToolCall, ToolResult
from gym.harness.builtin_tools import BUILTIN_TOOLS, ToolEnv
from gym.harness.config import HarnessConfig
from gym.harness.coworker_model import coworker_model
from gym.harness.coworkers import CoworkerSession
from gym.harness.faults import FaultInjector
from gym.harness.fileops import FileOps
from gym.harness.shell import PersistentShell
from gym.harness.tool import ToolError
from gym.mcp_client import McpServerConnection, server_command
from gym.sandbox.base import Sandbox
from gym.tasks import Task

STARTUP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class McpTool:
    server: str
    name: str  # the server's own name for it
    schema: dict[str, Any]


# The tools each (image, (server, *command)) listed when first started in this process.
_LISTED: dict[tuple[str, tuple[str, ...]], list[McpTool]] = {}


class _Server:
    """One MCP server of an episode, started on demand. Its connection lives in a task of its own, which
    opens and closes it (an MCP session must be closed by the task that opened it; a first call may come
    from any task). Not an anyio task group: that would wrap every error of the episode in a group."""

    def __init__(self, sandbox: Sandbox, name: str, cmd: list[str], timeout_s: float):
        self.sandbox, self.name, self.cmd, self.timeout_s = sandbox, name, cmd, timeout_s
        self._ready: asyncio.Future[McpServerConnection] | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    async def connection(self) -> McpServerConnection:
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._owner = asyncio.create_task(self._serve(self._ready))
        return await asyncio.shield(self._ready)  # a cancelled caller leaves the start to the next one

    async def _serve(self, ready: asyncio.Future[McpServerConnection]) -> None:
        try:
            async with McpServerConnection(
                self.sandbox, self.name, self.cmd, timeout_s=self.timeout_s
            ) as conn:
                ready.set_result(conn)
                await self._stop.wait()
        except BaseException as exc:
            if ready.done():
                raise
            if isinstance(exc, asyncio.CancelledError):
                ready.cancel()
                raise
            ready.set_exception(exc)  # the caller of connection() sees why it did not start

    async def close(self) -> None:
        """Stop the server; an error in closing it is raised (the episode records it), a failed start is not
        (its first caller was told)."""
        self._stop.set()
        if self._owner is None:
            return
        try:
            await asyncio.wait([self._owner])
        except asyncio.CancelledError:
            self._owner.cancel()
            raise
        if self._ready is not None and not self._ready.cancelled():
            self._ready.exception()  # marked as seen, whoever asked
        if not self._owner.cancelled() and (error := self._owner.exception()) is not None:
            raise error

    async def tools(self) -> list[McpTool]:
        """The server's tools: listed by this image's server before, or now by starting this one."""
        image = getattr(self.sandbox, "image_id", None)
        key = (image, (self.name, *self.cmd)) if image else None
        if key in _LISTED:
            return _LISTED[key]
        tools = [self._tool(item) for item in await (await self.connection()).list_tools()]
        if key is not None:
            _LISTED[key] = tools
        return tools

    def _tool(self, item: mcp_types.Tool) -> McpTool:
        name = f"{self.name}.{item.name}"
        return McpTool(
            self.name,
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


def servers_for(task: Task, config: HarnessConfig) -> dict[str, list[str]]:
    """Server name -> command for this episode."""
    if config.mcp_servers is not None:
        return dict(config.mcp_servers)
    return {name: server_command(name) for name in task.apps}


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
        servers: dict[str, _Server],
        mcp_tools: dict[str, McpTool],
        injector: FaultInjector,
        output_cap: int,
        coworkers: CoworkerSession | None = None,
    ):
        self.env, self.servers, self.mcp_tools = env, servers, mcp_tools
        self.injector, self.output_cap = injector, output_cap
        self.coworkers = coworkers

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, sandbox: Sandbox, task: Task, config: HarnessConfig) -> AsyncIterator[Toolbox]:
        """Start the shell lazily, and each MCP server now or at its first call (see the module's docstring)."""
        limits = config.limits_for(task)
        # The shell cuts first, leaving room for its notes, so its own note on what was cut survives.
        shell = PersistentShell(sandbox, cwd=config.workdir, output_cap=config.output_cap_chars - 300)
        env = ToolEnv(sandbox, shell, FileOps(sandbox), limits.tool_timeout_s)
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(shell.close)
            stack.push_async_callback(env.files.close)
            servers: dict[str, _Server] = {}
            mcp_tools: dict[str, McpTool] = {}
            for name, cmd in servers_for(task, config).items():
                # start-up may take longer than one call is allowed to (LibreOffice, a cold Python)
                timeout_s = max(STARTUP_TIMEOUT_S, limits.tool_timeout_s)
                servers[name] = server = _Server(sandbox, name, cmd, timeout_s)
                stack.push_async_callback(server.close)
                mcp_tools.update({tool.schema["function"]["name"]: tool for tool in await server.tools()})
            # Seeded by the task: every rollout of a group meets the same colleagues.
            coworkers = (
                CoworkerSession(
                    sandbox,
                    task.coworkers,
                    task.key,
                    apps=tuple(task.apps),
                    model=coworker_model(config.coworkers),
                )
                if task.coworkers
                else None
            )
            yield cls(
                env, servers, mcp_tools, FaultInjector(config.faults), config.output_cap_chars, coworkers
            )

    def names(self) -> list[str]:
        return [*BUILTIN_TOOLS, *self.mcp_tools]

    def schemas(self) -> list[dict[str, Any]]:
        """Fresh copies: the MCP schemas are shared by every episode on the image (_LISTED)."""
        return [spec.schema() for spec in BUILTIN_TOOLS.values()] + [
            copy.deepcopy(t.schema) for t in self.mcp_tools.values()
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
        if self.coworkers is not None:
            await asyncio.to_thread(self.coworkers.after_call, call.name, call.arguments)
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
            connection = await self.servers[target.server].connection()
            outcome = await connection.call_tool(target.name, arguments, timeout_s=self.env.tool_timeout_s)
            text = outcome.text or (json.dumps(outcome.structured) if outcome.structured is not None else "")
            return text or "(no output)", outcome.is_error, None
        close = difflib.get_close_matches(name, self.names(), n=3)
        hint = (
            f" Did you mean {', '.join(close)}?" if close else f" Available tools: {', '.join(self.names())}."
        )
        raise ToolError(f"unknown tool '{name}'.{hint}")
