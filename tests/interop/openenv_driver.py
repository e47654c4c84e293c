"""Drives `egym serve-env --protocol openenv` with OpenEnv's own clients; runs in the openenv side venv.

    python openenv_driver.py URL SCENARIO '{"task": ...}'   -> one line of JSON on stdout

It imports openenv-core and egym's typed client (gym/interop/openenv_client.py, copied
onto PYTHONPATH), never egym: tests/interop/test_openenv.py asserts on what it prints.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from openenv_client import EgymEnv


async def failure(call: Any) -> str:
    """The client's error for a call expected to be refused."""
    try:
        await call
    except RuntimeError as exc:
        return str(exc)
    return "(not refused)"


def final(result: Any) -> dict[str, Any]:
    metadata = dict(result.observation.metadata)
    items = metadata.pop("items", [])
    return {
        "done": result.done,
        "reward": result.reward,
        "metadata": metadata,
        "items": [i["status"] for i in items],
    }


async def oracle(url: str, args: dict[str, Any]) -> dict[str, Any]:
    """reset on a task, its tools, the oracle's calls, the oracle's answer; then a call after the end."""
    async with EgymEnv(base_url=url) as env:
        first = await env.reset(task=args["task"])
        out: dict[str, Any] = {
            "prompt": first.observation.prompt,
            "reset_tools": [t.name for t in first.observation.tools],
            "reset_metadata": first.observation.metadata,
            "listed": [t.name for t in await env.list_tools(use_cache=False)],
            "calls": [],
        }
        for tool, arguments in args["calls"]:
            step = await env.step(CallToolAction(tool_name=tool, arguments=arguments))
            out["calls"].append(
                {"data": step.observation.result["data"], "metadata": step.observation.metadata}
            )
        out["text"] = await env.call_tool("db.query", sql="SELECT 1 AS one")
        out["state"] = (await env.state()).model_dump()
        out["final"] = final(await env.submit(args["answer"]))
        out["after"] = await failure(env.call_tool("db.query", sql="SELECT 1"))
        out["state_after"] = (await env.state()).model_dump()
    return out


async def wrong(url: str, args: dict[str, Any]) -> dict[str, Any]:
    """A mistyped tool (a result to read), submit without an answer (refused), a wrong answer."""
    async with EgymEnv(base_url=url) as env:
        first = await env.reset(split="train", index=1)
        typo = await env.step(CallToolAction(tool_name="db.querry", arguments={"sql": "SELECT 1"}))
        refused = await failure(env.call_tool("submit", answr="x"))
        return {
            "task": first.observation.task["id"],
            "typo": typo.observation.result["data"],
            "typo_metadata": typo.observation.metadata,
            "refused": refused,
            "final": final(await env.submit(args["answer"])),
        }


async def unknown(url: str, _args: dict[str, Any]) -> dict[str, Any]:
    async with EgymEnv(base_url=url) as env:
        return {
            "task": await failure(env.reset(task="acme/product-prize-l0-s0")),
            "index": await failure(env.reset(split="train", index=7)),
            "step": await failure(env.step(CallToolAction(tool_name="bash", arguments={"command": "true"}))),
            "tools_before_reset": [t.name for t in await env.list_tools()],
        }


async def disconnect(url: str, args: dict[str, Any]) -> None:
    """Open an episode, say its id, and wait to be killed (the connection drops without a close)."""
    env = EgymEnv(base_url=url)
    first = await env.reset(task=args["task"])
    print(json.dumps({"episode_id": first.observation.metadata["episode_id"]}), flush=True)
    await asyncio.sleep(3600)


async def stock(url: str, args: dict[str, Any]) -> dict[str, Any]:
    """OpenEnv's stock clients, unchanged: MCPToolClient (WebSocket and HTTP /mcp) and GenericEnvClient."""
    out: dict[str, Any] = {}
    async with MCPToolClient(base_url=url, message_timeout_s=300) as mcp:
        first = await mcp.reset(seed=0)
        out["mcp_reset_prompt"] = first.observation.metadata["prompt"]
        out["mcp_tools"] = [t.name for t in await mcp.list_tools()]
        out["mcp_echo"] = await mcp.call_tool("bash", command="echo $((6*7))")
        last = await mcp.step(CallToolAction(tool_name="submit", arguments={"answer": args["answer"]}))
        out["mcp_final"] = {"done": last.done, "reward": last.reward}
    production = MCPToolClient(base_url=url, message_timeout_s=300)
    production.use_production_mode = True  # JSON-RPC on POST /mcp, a session id instead of a socket
    out["http_tools"] = [t.name for t in await production.list_tools()]
    out["http_session"] = production._production_session_id
    out["http_echo"] = await production.call_tool("bash", command="echo hello")
    await production.close()  # openenv/session/close
    generic = GenericEnvClient(base_url=url, message_timeout_s=300).sync()
    with generic:
        generic.reset(task=args["task"])
        steps = [
            generic.step(CallToolAction(tool_name="bash", arguments={"command": "true"})) for _ in range(6)
        ]
        out["generic_steps"] = [{"done": s.done, "reward": s.reward} for s in steps]
        out["generic_last"] = {k: v for k, v in steps[-1].observation["metadata"].items() if k != "items"}
        try:
            generic.step(ListToolsAction())
        except RuntimeError as exc:
            out["generic_after"] = str(exc)
    return out


SCENARIOS = {"oracle": oracle, "wrong": wrong, "unknown": unknown, "disconnect": disconnect, "stock": stock}

if __name__ == "__main__":
    url, scenario, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3] if len(sys.argv) > 3 else "{}")
    print(json.dumps(asyncio.run(SCENARIOS[scenario](url, args)), default=str))
