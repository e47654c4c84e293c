"""Run the dashboard in a background thread on a free local port (tests, benchmarks, notebooks)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from core.errors import EgymError


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class BackgroundServer:
    """`with BackgroundServer(app) as base_url:` serves `app` on 127.0.0.1 until the block ends."""

    def __init__(
        self, app: Starlette, host: str = "127.0.0.1", port: int | None = None, start_timeout: float = 15
    ):
        self.host, self.port = host, port or free_port(host)
        self.start_timeout = start_timeout
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, name="egym-dashboard", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise EgymError(f"dashboard did not start on {self.base_url}: is the port taken?")
            time.sleep(0.02)
        return self.base_url

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
