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
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import docker
import httpx

from gym.policies.oracle import AnswerStep, ToolStep, load_solution
from gym.task_refs import resolve

ROOT = Path(__file__).resolve().parents[2]
HEALTH = {"ors": "/health", "openenv": "/health", "nemo-gym": "/"}  # what each answers when up


@dataclass
class Served:
    """A running `egym` server: its base URL, and once it has stopped, what it wrote to stderr."""

    url: str
    output: str = ""


@contextlib.contextmanager
def egym_server(
    *args: str, health: str, ready_within: float = 120, stop_within: float = 90
) -> Iterator[Served]:
    """`egym ARGS... --port P` on a free port, waited for until GET `health` answers 200; stopped like Ctrl-C."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "gym.cli", *args, "--port", str(port)]
    served = Served(f"http://127.0.0.1:{port}")
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: nobody reads it while the server runs
        server = subprocess.Popen(command, cwd=ROOT, stderr=log, text=True)
        try:
            _wait_for(served.url + health, server, log, ready_within)
            yield served
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=stop_within)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        served.output = _read(log)


@contextlib.contextmanager
def serve_env(
    protocol: str, *args: str, idle_timeout: float = 120, max_episodes: int = 8
) -> Iterator[tuple[str, str]]:
    """`egym serve-env --protocol PROTOCOL ARGS...` on a free port: (base URL, run label)."""
    run = f"{protocol}-test-{uuid.uuid4().hex[:8]}"
    options = ["--run", run, "--idle-timeout", str(idle_timeout), "--max-episodes", str(max_episodes)]
    with egym_server("serve-env", "--protocol", protocol, *options, *args, health=HEALTH[protocol]) as served:
        yield served.url, run
    assert containers(run) == [], "the stopped server left containers"
    assert "Traceback" not in served.output and "never retrieved" not in served.output, served.output


def _wait_for(url: str, server: subprocess.Popen, log: IO[str], within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        assert server.poll() is None, f"the server exited: {_read(log)}"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        assert time.monotonic() < deadline, f"the server did not answer {url} in {within:g} s"
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
