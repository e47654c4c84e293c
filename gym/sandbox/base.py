"""The Sandbox protocol: a handful of methods, nothing Docker-specific."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    output: str  # stdout and stderr interleaved as the process wrote them
    timed_out: bool = False
    seconds: float = 0.0
    truncated: bool = False  # the output was longer than the caller's max_output and was cut there

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class StdioStream(Protocol):
    """A bidirectional byte stream to a process's stdin/stdout inside the sandbox."""

    def write(self, data: bytes) -> None: ...
    def read(self, max_bytes: int = 65536) -> bytes:
        """Blocks until bytes arrive; b"" at end of stream."""
        ...

    def close(self) -> None: ...


def stderr_said(stdio: StdioStream | None, most: int = 300) -> str:
    """The end of what a stdio process wrote to stderr, for an error message ('' when nothing)."""
    return getattr(stdio, "stderr_tail", b"").decode(errors="replace").strip()[-most:]


class Sandbox(Protocol):
    id: str

    def exec(
        self,
        cmd: str | list[str],
        *,
        timeout: float = 60,
        user: str = "agent",
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_output: int = 16 << 20,
    ) -> ExecResult:
        """Run a command (a string goes through `bash -c`). Past `timeout` it is killed and reported timed out.

        Commands run as any user but `agent` must follow gym.sandbox.privilege's rules.
        """
        ...

    def read_file(self, path: str, *, max_bytes: int = 64 << 20) -> bytes:
        """A regular file's bytes; FileNotFoundError when absent, an OSError when over `max_bytes`."""
        ...

    def write_file(self, path: str, data: bytes, *, user: str = "agent", mode: int = 0o644) -> None: ...

    def open_stdio(
        self, cmd: list[str], *, user: str = "agent", env: dict[str, str] | None = None
    ) -> StdioStream: ...

    def seal(self) -> str:
        """End the agent's episode: stop all its processes; agent commands are refused afterwards."""
        ...

    def close(self) -> None: ...
