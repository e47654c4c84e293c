"""The typed OpenEnv client of egym's environment (`egym serve-env --protocol openenv`).

Meant for the OpenEnv side: it imports only `openenv` (pip install openenv-core==0.3.0)
and pydantic, never egym, so it runs in a trainer's venv whose pins clash with egym's.
Copy this one file there. It is OpenEnv's own MCPToolClient (WebSocket /ws, reset/step,
list_tools, call_tool) with egym's reset observation and state typed, and `submit`.

    import asyncio
    from openenv_client import EgymEnv

    async def main():
        async with EgymEnv(base_url="http://127.0.0.1:8080") as env:
            first = await env.reset(task="acme/product-price-l0-s0")   # or split=, index= / seed=
            print(first.observation.prompt, [t.name for t in first.observation.tools])
            print(await env.call_tool("db.query", sql="SELECT count(*) FROM products"))
            last = await env.submit("The price is 3200.")
            print(last.done, last.reward, last.observation.metadata["items"])

    asyncio.run(main())

`EgymEnv(...).sync()` gives the same methods without await (OpenEnv's SyncEnvClient).
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_server.mcp_types import CallToolAction, Tool
from openenv.core.env_server.types import Observation, State
from openenv.core.mcp_client import MCPToolClient

SUBMIT = "submit"


class EgymObservation(Observation):
    """reset()'s observation: the prompt (system prompt, then the task) and the episode's tools."""

    prompt: str
    messages: list[dict[str, str]]
    task: dict[str, Any]
    tools: list[Tool]


class EgymState(State):
    """state(): OpenEnv's episode_id and step_count, and the episode's task, turns left and end."""

    task_id: str | None = None
    turns_left: int | None = None
    done: bool = False
    stop_reason: str | None = None


class EgymEnv(MCPToolClient):
    """An egym episode per reset; tools by call_tool (their output text), the answer by submit (the reward)."""

    def __init__(self, base_url: str, *, message_timeout_s: float = 300.0, **kwargs: Any) -> None:
        # A reset waits for the task's container, a submit for its grade: both outlast OpenEnv's 60 s default.
        super().__init__(base_url=base_url, message_timeout_s=message_timeout_s, **kwargs)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        data = payload.get("observation", {})
        if "prompt" not in data:  # a tool call or a tool list: OpenEnv's own observations
            return super()._parse_result(payload)
        observation = EgymObservation(
            prompt=data["prompt"],
            messages=data.get("messages", []),
            task=data.get("task", {}),
            tools=[Tool(**tool) for tool in data.get("tools", [])],
            done=payload.get("done", False),
            reward=payload.get("reward"),
            metadata=data.get("metadata", {}),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> EgymState:
        return EgymState(**payload)

    async def submit(self, answer: str) -> StepResult[Observation]:
        """End the episode with `answer`: done, the reward (None if the grade is incomplete), the items in metadata."""
        return await self.step(CallToolAction(tool_name=SUBMIT, arguments={"answer": answer}))
