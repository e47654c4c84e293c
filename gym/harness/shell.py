"""A persistent bash session inside the sandbox, so `cd` and `export` carry over between tool calls.

One `bash` process per episode, started with `Sandbox.open_stdio`. Each call
sends the command base64-encoded (quoting cannot break it) to `eval`, with
stdin from /dev/null, then prints a random marker line with the exit code and
working directory. Output is collected until the marker arrives.

A call that outlives its timeout has the processes it started killed (a
separate exec kills the shell's descendants younger than the call); the shell
itself survives and keeps its state. If the shell itself is stuck (a busy
builtin loop) or has exited, it is killed and restarted in the last known
directory, and the output says that variables were reset.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import re
import threading
import time
import uuid
from dataclasses import dataclass

import anyio.to_thread

from core.errors import SandboxError
from gym.sandbox.base import Sandbox, StdioStream

# Kill descendants of shell $1 that started within the last $2 seconds (the
# timed-out command's processes, not servers an earlier command left running).
KILL_RECENT_DESCENDANTS = r"""
tree() { local c; for c in $(ps -o pid= --ppid "$1"); do tree "$c"; echo "$c"; done; }
victims=""
for p in $(tree "$1"); do
  age=$(ps -o etimes= -p "$p" | tr -d ' ')
  [ -n "$age" ] && [ "$age" -le "$2" ] && victims="$victims $p"
done
[ -n "$victims" ] && kill -9 $victims 2>/dev/null
exit 0
"""
# Kill shell $1 with everything it started. Killing the shell alone while a child
# still holds its output pipe stalls the Docker daemon for seconds.
KILL_TREE = r"""
tree() { local c; for c in $(ps -o pid= --ppid "$1"); do tree "$c"; echo "$c"; done; }
kill -9 $(tree "$1") "$1" 2>/dev/null
exit 0
"""
GRACE_S = 1.0  # after the kill, a healthy shell prints its marker within milliseconds


def pump(stdio: StdioStream, name: str) -> asyncio.Queue[bytes | None]:
    """Chunks read from `stdio` by a dedicated thread (never the shared worker pool); None at end of stream."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    def run() -> None:
        try:
            while chunk := stdio.read():
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except (OSError, ValueError, RuntimeError):  # socket closed, or the event loop is gone
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=run, name=name, daemon=True).start()
    return queue


@dataclass(frozen=True)
class ShellResult:
    output: str
    exit_code: int | None
    timed_out: bool = False
    cut_bytes: int = 0
    restarted: bool = False
    cwd: str = ""


class _Collector:
    """Keeps the head and tail of a stream (at most ~cap bytes) and counts what was cut from the middle."""

    def __init__(self, cap: int, marker: bytes):
        self.head, self.tail = bytearray(), bytearray()
        self.cut = 0
        self.cap = cap
        self.head_cap = cap // 2
        self.keep_tail = cap - self.head_cap + len(marker) + 600  # room for the marker line
        self.pattern = re.compile(rb"\n" + re.escape(marker) + rb" (\d+) ([^\n]*)\n")

    def feed(self, chunk: bytes) -> re.Match[bytes] | None:
        self.tail += chunk
        found = self.pattern.search(self.tail)
        if found:
            return found
        excess = len(self.tail) - self.keep_tail
        if excess > 4096:
            take = min(excess, self.head_cap - len(self.head))
            self.head += self.tail[:take]
            self.cut += excess - take
            del self.tail[:excess]
        return None

    def text(self, end: int | None = None) -> str:
        """Everything collected (up to `end` of the tail), at most `cap` bytes, with a note where it was cut."""
        tail = bytes(self.tail[:end] if end is not None else self.tail)
        head = bytes(self.head)
        cut = self.cut
        if cut or len(head) + len(tail) > self.cap:
            head, tail = (head + tail[: self.head_cap - len(head)]), tail[self.head_cap - len(head) :]
            keep = self.cap - self.head_cap
            cut += max(0, len(tail) - keep)
            tail = tail[-keep:] if keep else b""
        if not cut:
            return (head + tail).decode(errors="replace")
        note = f"\n[... {cut:,} bytes of output cut here ...]\n"
        return head.decode(errors="replace") + note + tail.decode(errors="replace")


class PersistentShell:
    """A long-lived bash in the sandbox. Use `await run(cmd, timeout)`; `await close()` at the end."""

    def __init__(self, sandbox: Sandbox, *, cwd: str = "/workspace", output_cap: int = 30_000):
        self.sandbox, self.cwd, self.output_cap = sandbox, cwd, output_cap
        self._stdio: StdioStream | None = None
        self._queue: asyncio.Queue[bytes | None] | None = None
        self._pid: int | None = None
        self._lock = asyncio.Lock()

    # -- life cycle ------------------------------------------------------------

    async def _start(self) -> None:
        self._stdio = stdio = await anyio.to_thread.run_sync(
            lambda: self.sandbox.open_stdio(["bash", "--noprofile", "--norc"])
        )
        self._queue = pump(stdio, "egym-shell-reader")
        marker = f"__EGYM_{uuid.uuid4().hex}__"
        setup = (
            f"exec 2>&1\ncd {_quote(self.cwd)} 2>/dev/null || cd /workspace\n"
            "export USER=$(id -un) LOGNAME=$(id -un) PAGER=cat GIT_PAGER=cat TERM=dumb\n"
            f'printf \'\\n{marker} %s %s\\n\' "$$" "$PWD"\n'
        )
        stdio.write(setup.encode())
        collector = _Collector(4096, marker.encode())
        found, _ = await self._collect(collector, time.monotonic() + 30)
        if not found:
            raise SandboxError(
                f"bash did not start in container {self.sandbox.id[:12]}: {collector.text()[-300:]}"
            )
        self._pid = int(found.group(1))

    async def _kill_shell(self) -> None:
        if self._pid is not None:
            await self._exec(KILL_TREE, str(self._pid))
        if self._stdio is not None:
            self._stdio.close()
        self._stdio, self._pid = None, None

    async def close(self) -> None:
        """End the shell (it exits at end of input). What it left running is stopped by Sandbox.seal."""
        if self._stdio is not None:
            self._stdio.close()
        self._stdio, self._pid = None, None

    async def _exec(self, script: str, *args: str) -> None:
        await anyio.to_thread.run_sync(
            lambda: self.sandbox.exec(["bash", "-c", script, "_", *args], timeout=15), abandon_on_cancel=True
        )

    # -- commands ----------------------------------------------------------------

    async def run(self, command: str, timeout: float) -> ShellResult:
        async with self._lock:
            restarted = False
            if self._stdio is None:
                await self._start()
            started = time.monotonic()
            marker = f"__EGYM_{uuid.uuid4().hex}__"
            encoded = base64.b64encode(command.encode()).decode()
            script = (
                f'__egym_cmd=$(printf %s {encoded} | base64 -d)\neval "$__egym_cmd" < /dev/null\n'
                f'printf \'\\n{marker} %s %s\\n\' "$?" "$PWD"\n'
            )
            collector = _Collector(self.output_cap, marker.encode())
            with contextlib.suppress(OSError):  # a dead shell shows up below as end of stream
                self._stdio.write(script.encode())
            found, eof = await self._collect(collector, started + timeout)
            timed_out = not found and not eof
            if timed_out:
                age = math.ceil(time.monotonic() - started) + 1
                await self._exec(KILL_RECENT_DESCENDANTS, str(self._pid), str(age))
                found, eof = await self._collect(collector, time.monotonic() + GRACE_S)
            if not found:
                output = collector.text()
                await self._kill_shell()
                await self._start()
                restarted = True
                return ShellResult(output, None, timed_out, collector.cut, restarted, self.cwd)
            self.cwd = found.group(2).decode(errors="replace") or self.cwd
            output = collector.text(found.start())
            return ShellResult(output, int(found.group(1)), timed_out, collector.cut, restarted, self.cwd)

    async def _collect(self, collector: _Collector, deadline: float) -> tuple[re.Match[bytes] | None, bool]:
        """Feed the collector until the marker (match, False), end of stream (None, True) or deadline (None, False)."""
        assert self._queue is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, False
            try:
                chunk = await asyncio.wait_for(self._queue.get(), remaining)
            except TimeoutError:
                return None, False
            if chunk is None:
                return None, True
            found = collector.feed(chunk)
            if found:
                return found, False


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"
