"""One egym episode driven four ways, for bench_interop.py: in process, and through each adapter's wire.

Every client has the same four steps (start -> tools listed, call, submit -> reward, close):
    direct    gym.episode.ToolSession in this process (the lifecycle every server drives)
    ors       the official client, ors-sdk's AsyncORS (HTTP + server-sent events)
    openenv   a plain WebSocket client (`websockets`) speaking OpenEnv 0.3.0's /ws messages
    nemo-gym  a plain HTTP client (`httpx`) speaking NeMo Gym's resources-server endpoints
The OpenEnv and NeMo Gym wires are spoken directly rather than through openenv-core or nemo-gym,
whose pins clash with egym's (they live in side venvs for the conformance tests): the bench
runs in egym's venv, and a thin client adds the least of its own to what is measured.
`egym_servers` starts `egym serve-env` as the tests do: a subprocess on a free port.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import httpx
from ors.client import AsyncORS
from ors.client import Task as OrsTask
from websockets.asyncio.client import ClientConnection, connect

from gym.episode import ToolSession
from gym.harness.config import HarnessConfig
from gym.tasks import Task

ROOT = Path(__file__).resolve().parents[1]


class EpisodeClient(Protocol):
    async def start(self) -> None: ...  # returns once the episode's tools are listed
    async def call(self, tool: str, arguments: dict[str, Any]) -> str: ...  # the tool's output text
    async def submit(self, answer: str) -> float | None: ...  # the reward
    async def close(self) -> None: ...  # idempotent


class ToolFailed(RuntimeError):
    """A call the bench expected to succeed came back as an error: the timings would be of errors."""


class DirectEpisode:
    def __init__(self, task: Task, *, run_id: str, episode_id: str, harness: HarnessConfig) -> None:
        self.session = ToolSession(task, run_id=run_id, rollout_id=episode_id, harness=harness)

    async def start(self) -> None:
        await self.session.start()
        assert self.session.tools, "the episode listed no tools"

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.session.call(tool, arguments)
        if result.is_error:
            raise ToolFailed(result.output[:300])
        return result.output

    async def submit(self, answer: str) -> float | None:
        grade = await self.session.submit(answer)
        return None if grade.incomplete else grade.normalized

    async def close(self) -> None:
        await self.session.close()


class OrsEpisode:
    def __init__(self, ors: AsyncORS, key: str) -> None:
        self.session = ors.environment("egym").session(
            task=OrsTask(environment_name="egym", task_spec={"id": key})
        )
        self.stack = contextlib.AsyncExitStack()

    async def start(self) -> None:
        await self.stack.enter_async_context(self.session)  # POST /create_session, /create
        assert await self.session.list_tools(), "the episode listed no tools"  # waits for the container

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        out = await self.session.call_tool(tool, arguments)
        if out.metadata.get("is_error"):
            raise ToolFailed(out.blocks[0].text[:300])
        return out.blocks[0].text

    async def submit(self, answer: str) -> float | None:
        out = await self.session.call_tool("submit", {"answer": answer})
        assert out.finished, "submit did not finish the episode"
        return out.reward

    async def close(self) -> None:
        await self.stack.aclose()  # POST /delete


class OpenEnvEpisode:
    def __init__(self, url: str, key: str) -> None:
        self.url, self.key = url.replace("http://", "ws://") + "/ws", key
        self.ws: ClientConnection | None = None

    async def _send(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        assert self.ws is not None
        await self.ws.send(json.dumps({"type": kind, "data": data}))
        reply = json.loads(await self.ws.recv())
        if reply["type"] == "error":
            raise RuntimeError(f"OpenEnv {kind}: {reply['data']['message']}")
        return reply["data"]

    async def start(self) -> None:
        self.ws = await connect(self.url, max_size=None, open_timeout=60)
        first = await self._send("reset", {"task": self.key})  # answered once the tools are up
        assert first["observation"]["tools"], "the episode listed no tools"

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        action = {"type": "call_tool", "tool_name": tool, "arguments": arguments}
        observation = (await self._send("step", action))["observation"]
        if observation["error"] is not None or observation["metadata"]["is_error"]:
            raise ToolFailed(str(observation["error"] or observation["result"]["data"])[:300])
        return observation["result"]["data"]

    async def submit(self, answer: str) -> float | None:
        action = {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": answer}}
        result = await self._send("step", action)
        assert result["done"], "submit did not end the episode"
        return result["reward"]

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):  # the server may have closed first
                await self.ws.send(json.dumps({"type": "close"}))
            await self.ws.close()
            self.ws = None


class NemoGymEpisode:
    """A NeMo Gym agent's requests: seed_session, POST /<function>, verify; the session is a cookie."""

    def __init__(self, url: str, key: str) -> None:
        self.http = httpx.AsyncClient(base_url=url, timeout=300)  # keeps the session cookie
        self.key = key

    async def start(self) -> None:
        """Seed, then one trivial call: NeMo Gym lists tools per dataset row, so the first call
        (which waits for the container) is when the client knows the episode is up."""
        (await self.http.post("/seed_session", json={"egym_task": self.key})).raise_for_status()
        await self.call("db.query", {"sql": "SELECT 1"})

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        answer = await self.http.post("/" + tool.replace(".", "__"), json=arguments)
        answer.raise_for_status()
        if answer.text.startswith("Error"):
            raise ToolFailed(answer.text[:300])
        return answer.text

    async def submit(self, answer: str) -> float | None:
        message = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": answer}],
        }
        body = {
            "responses_create_params": {"input": []},
            "response": {"output": [message]},
            "egym_task": self.key,
        }
        verified = await self.http.post("/verify", json=body)
        verified.raise_for_status()
        return verified.json()["reward"]

    async def close(self) -> None:
        await self.http.aclose()  # verify closed the episode; an unverified one goes by the idle timeout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def egym_servers(
    protocols: list[str], task: str, *, run_id: str, settings: list[str]
) -> Iterator[dict[str, str]]:
    """`egym serve-env --protocol P` for each P, side by side on free ports, as the tests start them:
    their URLs by protocol. On exit they are stopped like Ctrl-C, so each closes its episodes."""
    servers: dict[str, tuple[str, subprocess.Popen, Any]] = {}
    with contextlib.ExitStack() as stack:
        try:
            for protocol in protocols:
                port = free_port()
                command = [sys.executable, "-m", "gym.cli", "serve-env", "--protocol", protocol]
                command += ["--port", str(port), "--run", run_id, *settings, task]
                log = stack.enter_context(tempfile.TemporaryFile("w+"))  # a file: nobody reads a pipe here
                process = subprocess.Popen(command, cwd=ROOT, stderr=log, text=True)
                servers[protocol] = (f"http://127.0.0.1:{port}", process, log)
            for protocol, (url, process, log) in servers.items():
                _wait_for_health(url, process, log, protocol)
            yield {protocol: url for protocol, (url, _, _) in servers.items()}
        finally:
            for _, process, _ in servers.values():
                if process.poll() is None:
                    process.send_signal(signal.SIGINT)
            for _, process, _ in servers.values():
                try:
                    process.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _wait_for_health(url: str, server: subprocess.Popen, log: Any, protocol: str) -> None:
    health = {"nemo-gym": "/"}.get(protocol, "/health")
    deadline = time.monotonic() + 180
    while True:
        if server.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"egym serve-env --protocol {protocol} exited: {log.read()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + health, timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"egym serve-env --protocol {protocol} did not answer in 180 s")
        time.sleep(0.3)
