"""The episode's tools as an MCP server: what verifiers' harnesses call, proxied to egym.

One server serves every rollout of an eval worker (a shared toolset); each call finds
its rollout's episode in the rollout state. The tools are the episode's own (the
harness's atomic tools and the task's apps), listed per episode; `submit` is left out:
the model's final reply is the answer, submitted when the rollout is scored. A call
egym refuses because the episode is over (its turn or time limit) marks the state, so
the task stops the rollout (`EgymTask.episode_over`).
"""

from __future__ import annotations

from typing import Any, cast

import verifiers.v1 as vf
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool
from ors.client import AsyncORS, ToolCallError
from ors.client.session import AsyncSession
from pydantic import Field

from egym_verifiers.episodes import ENV_NAME, SUBMIT, attached


class EgymState(vf.State):
    """What the rollout's tool calls and scoring share."""

    base_url: str = ""
    episode: str = ""
    over: str | None = Field(None, description="Why egym refused a call: the episode takes no more.")


class EgymToolset(vf.Toolset[vf.SharedToolsetConfig, EgymState]):
    TOOL_PREFIX = None  # egym's tool names, as egym's own harness shows them

    def __init__(self, config: vf.SharedToolsetConfig) -> None:
        super().__init__(config)
        self._clients: dict[str, AsyncORS] = {}  # one per egym server, held for the process

    def register(self, mcp: MCPServer) -> None:
        # The tool list differs per episode, so the protocol handlers are replaced (as verifiers'
        # NeMo Gym toolset does) rather than tools registered once.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        specs = await self._session().list_tools()
        return [
            Tool(name=s.name, description=s.description, input_schema=dict(s.input_schema or {}))
            for s in specs
            if s.name != SUBMIT
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult:
        if name == SUBMIT:  # the answer is the final reply; a submit here would end the episode early
            text = "submit is not a tool here: reply with your final answer instead."
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        try:
            output = await self._session().call_tool(name, arguments)
        except ToolCallError as exc:  # egym refuses calls only once the episode is over (limits)
            self.state.over = str(exc)
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        text = "\n".join(getattr(block, "text", "") for block in output.blocks)
        is_error = bool((output.metadata or {}).get("is_error"))
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)

    def _session(self) -> AsyncSession:
        state = self.state
        if not state.episode:
            raise ValueError("this rollout has no egym episode (run egym tasks under EgymEnv)")
        client = self._clients.setdefault(state.base_url, AsyncORS(base_url=state.base_url))
        return attached(client.environment(ENV_NAME), state.episode)


if __name__ == "__main__":
    EgymToolset.run()
