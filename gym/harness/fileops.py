"""The host side of the file tools: one long-lived `fileops_remote` process per episode, as the agent user.

Starting Python for every call costs ~150 ms inside a container; a process
that stays up answers in a few milliseconds. Requests and replies are JSON
lines over `Sandbox.open_stdio`, so file contents of any size pass through
stdin (no argv limit). A call that outlives its timeout (a FIFO, a huge tree)
kills the process; the next call starts a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from pathlib import Path
from typing import Any

import anyio.to_thread

from core.errors import SandboxError
from gym.harness import fileops_remote
from gym.harness.shell import pump
from gym.harness.tool import ToolError
from gym.sandbox.base import Sandbox, StdioStream, stderr_said
from mcp_wrappers import PYTHON

REMOTE_SOURCE = Path(fileops_remote.__file__).read_text()


class FileOps:
    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox
        self._stdio: StdioStream | None = None
        self._queue: asyncio.Queue[bytes | None] | None = None
        self._buffer = b""
        self._ended = False
        self._pid: int | None = None
        self._ids = itertools.count()
        self._lock = asyncio.Lock()

    async def call(self, op: str, args: dict[str, Any], *, cwd: str, timeout: float) -> str:
        """Run one operation; its failures (and a timeout) raise ToolError with a model-readable message."""
        async with self._lock:
            if self._stdio is None:
                await self._start()
            request_id = next(self._ids)
            line = json.dumps({"id": request_id, "op": op, "args": args, "cwd": cwd}) + "\n"
            with contextlib.suppress(OSError):
                self._stdio.write(line.encode())
            reply = await self._reply(time.monotonic() + timeout)
            if reply is None or reply.get("id") != request_id:
                exited = self._stdio is not None and self._queue.empty() and self._ended
                detail = stderr_said(self._stdio)
                await self.close()
                if exited:
                    raise ToolError(f"{op} failed: the file-tools process exited ({detail or 'no message'})")
                raise ToolError(f"{op} timed out after {timeout:g}s")
        if not reply["ok"]:
            raise ToolError(reply["error"])
        return reply["output"]

    async def _start(self) -> None:
        self._stdio = await anyio.to_thread.run_sync(
            lambda: self.sandbox.open_stdio([*PYTHON, "-c", REMOTE_SOURCE])
        )
        self._queue, self._buffer, self._ended = pump(self._stdio, "egym-fileops-reader"), b"", False
        hello = await self._reply(time.monotonic() + 30)
        if not hello or "pid" not in hello:
            raise SandboxError(f"the file-tools helper did not start in container {self.sandbox.id[:12]}")
        self._pid = hello["pid"]

    async def _reply(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line, or None at the deadline or end of stream."""
        assert self._queue is not None
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                chunk = await asyncio.wait_for(self._queue.get(), remaining)
            except TimeoutError:
                return None
            if chunk is None:
                self._ended = True
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    async def close(self) -> None:
        if self._pid is not None:
            pid = self._pid
            with contextlib.suppress(SandboxError):
                await anyio.to_thread.run_sync(
                    lambda: self.sandbox.exec(["kill", "-9", str(pid)], timeout=10), abandon_on_cancel=True
                )
        if self._stdio is not None:
            self._stdio.close()
        self._stdio, self._pid = None, None
