"""What the integration tests share: `egym serve-env` as a real subprocess, and the episodes' containers.

with serve_env("openenv", "acme/product-price", "--levels", "0", "--seeds", "0-1") as (url, run):
    ...                      # the server answers at url; its containers carry the label egym.run=run
# stopped like Ctrl-C: no container of the run may be left, no traceback in its log
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import docker
import httpx

from gym.families import resolve
from gym.policies.oracle import AnswerStep, ToolStep, load_solution

ROOT = Path(__file__).resolve().parents[2]
HEALTH = {"ors": "/health", "openenv": "/health", "nemo-gym": "/"}  # what each answers when up


@contextlib.contextmanager
def serve_env(
    protocol: str, *args: str, idle_timeout: float = 120, max_episodes: int = 8
) -> Iterator[tuple[str, str]]:
    """`egym serve-env --protocol PROTOCOL ARGS...` on a free port: (base URL, run label)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = f"{protocol}-test-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "gym.cli", "serve-env", "--protocol", protocol, "--port", str(port)]
    command += ["--run", run, "--idle-timeout", str(idle_timeout), "--max-episodes", str(max_episodes), *args]
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: nobody reads it while the server runs
        server = subprocess.Popen(command, cwd=ROOT, stderr=log, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_for(url + HEALTH[protocol], server, log)
            yield url, run
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=90)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        output = _read(log)
    assert containers(run) == [], "the stopped server left containers"
    assert "Traceback" not in output and "never retrieved" not in output, output


def _wait_for(url: str, server: subprocess.Popen, log: IO[str]) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert server.poll() is None, f"the server exited: {_read(log)}"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        assert time.monotonic() < deadline, f"the server did not answer {url} in 120 s"
        time.sleep(0.3)


def _read(log: IO[str]) -> str:
    log.seek(0)
    return log.read()


def containers(run: str, episode: str | None = None) -> list[str]:
    labels = [f"egym.run={run}"] + ([f"egym.rollout={episode}"] if episode else [])
    return [c.name for c in docker.from_env().containers.list(all=True, filters={"label": labels})]


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(0.5)


def oracle(key: str) -> tuple[list[ToolStep], str]:
    """The reference solution's tool calls and its answer."""
    (task,) = resolve([key])
    steps = load_solution(task.path / task.solution)
    answer = next(s.answer for s in steps if isinstance(s, AnswerStep))
    return [s for s in steps if isinstance(s, ToolStep)], answer
