"""Harness overheads: latency of each built-in tool, an MCP call, a timed-out command, an episode's set-up.

    .venv/bin/python bench/bench_harness.py [--n 20]   -> bench/results/harness.json

Everything runs in a real container (egym/world:latest). "episode overhead" is
run_episode with the null policy: shell and MCP servers started and stopped,
one turn, no tool call.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import summary, write
from core.trajectory import ToolCall
from gym.harness import HarnessConfig, run_episode, toolbox
from gym.harness.toolbox import Toolbox
from gym.policies import make_policy
from gym.sandbox import DockerSandbox
from gym.tasks import AgentIdentity, Limits, Task, World

DEMO = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("demo")
@app.tool()
def echo(text: str) -> str:
    """Echo a text."""
    return text
app.run()
'''
TASK = Task(id="bench", title="bench", world="w", prompt="p", apps=[], limits=Limits(tool_timeout_s=1))
WORLD = World(
    name="w",
    company="Acme",
    date=dt.date(2025, 1, 1),
    agent=AgentIdentity(name="A", title="T", email="a@x", chat_username="a"),
)
CALLS = {
    "bash": {"command": "echo hi"},
    "write": {"path": "/workspace/bench.txt", "content": "alpha\nbeta\n" * 50},
    "read": {"path": "/workspace/bench.txt"},
    "edit": {
        "path": "/workspace/bench.txt",
        "old_string": "alpha",
        "new_string": "alpha",
        "replace_all": True,
    },
    "glob": {"pattern": "**/*.txt"},
    "grep": {"pattern": "beta", "path": "/workspace"},
    "todo": {"items": [{"content": "x"}]},
    "demo.echo": {"text": "hello"},
}


async def timed(coro) -> float:
    started = time.perf_counter()
    await coro
    return time.perf_counter() - started


async def tool_latencies(sandbox: DockerSandbox, n: int) -> dict[str, dict[str, float]]:
    config = HarnessConfig(mcp_servers={"demo": ["python3", "-c", DEMO]})
    results: dict[str, list[float]] = {name: [] for name in CALLS}
    async with Toolbox.open(sandbox, TASK, config) as box:
        for i in range(n):
            for name, args in CALLS.items():
                if name == "edit":  # alternate, since replacing a string by itself is refused
                    args = {
                        **args,
                        "old_string": ("alpha", "ALPHA")[i % 2],
                        "new_string": ("ALPHA", "alpha")[i % 2],
                    }
                call = ToolCall(id="b", name=name, arguments=json.dumps(args))
                results[name].append(await timed(box.call(call)))
        timeouts = [
            await timed(box.call(ToolCall(id="t", name="bash", arguments='{"command": "sleep 30"}'))) - 1.0
            for _ in range(3)
        ]
    return {
        **{name: summary(v) for name, v in results.items()},
        "timeout_overhead_after_1s": summary(timeouts),
    }


async def episode_overhead(
    sandbox: DockerSandbox, n: int, servers: dict[str, list[str]], *, known_image: bool = True
) -> dict[str, float]:
    """A null-policy episode's seconds. On a known image a server starts at its first call (null makes none);
    `known_image=False` forgets the tool lists first, as the first episode of a process on an image."""
    samples = []
    for _ in range(n):
        if not known_image:
            toolbox._LISTED.clear()
        trajectory = await run_episode(
            sandbox, TASK, WORLD, make_policy("null"), HarnessConfig(mcp_servers=servers)
        )
        assert trajectory.stop_reason == "answered", trajectory.error
        samples.append(trajectory.seconds)
    return summary(samples)


async def main(n: int) -> None:
    with DockerSandbox.start(run_id="bench-harness") as sandbox:
        tools = await tool_latencies(sandbox, n)
        no_servers = await episode_overhead(sandbox, max(3, n // 4), {})
        demo = {"demo": ["python3", "-c", DEMO]}
        new_image = await episode_overhead(sandbox, max(3, n // 4), demo, known_image=False)
        known_image = await episode_overhead(sandbox, max(3, n // 4), demo)
    write(
        "harness",
        {
            "tool_call_seconds": tools,
            "episode_overhead_seconds": {
                "no_mcp_servers": no_servers,
                "one_mcp_server_new_image": new_image,  # started to list its tools
                "one_mcp_server_known_image": known_image,  # tools known: it would start at a first call
            },
            "note": "seconds per call, host to container and back; episode overhead = run_episode with the null policy",
        },
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    asyncio.run(main(parser.parse_args().n))
