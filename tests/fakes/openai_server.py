"""A local HTTP server speaking the OpenAI chat-completions protocol, for tests.

It stands in for a remote LLM endpoint (the one thing that cannot exist on a
test machine). Tests script it with a `respond(request_json) -> Reply` function
and read back every request it received.

    with FakeOpenAI(lambda req: Reply.text("hello")) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    @staticmethod
    def completion(
        message: dict[str, Any],
        *,
        model: str = "fake",
        finish_reason: str = "stop",
        logprobs: dict[str, Any] | None = None,
        usage: dict[str, int] | None = None,
        extra_choice: dict[str, Any] | None = None,
    ) -> Reply:
        choice = {
            "index": 0,
            "message": {"role": "assistant", **message},
            "finish_reason": finish_reason,
            "logprobs": logprobs,
            **(extra_choice or {}),
        }
        return Reply(
            body={
                "id": f"chatcmpl-{time.time_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [choice],
                "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    @staticmethod
    def text(content: str, **kw) -> Reply:
        return Reply.completion({"content": content}, **kw)

    @staticmethod
    def tool_calls(calls: list[tuple[str, str]], content: str = "", **kw) -> Reply:
        """calls: (function name, raw JSON arguments text)."""
        return Reply.completion(
            {
                "content": content or None,
                "tool_calls": [
                    {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                    for i, (name, args) in enumerate(calls)
                ],
            },
            finish_reason="tool_calls",
            **kw,
        )

    @staticmethod
    def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
        return Reply(
            status=status,
            body={"error": {"message": message, "type": "server_error", "code": status}},
            headers=headers or {},
        )


class FakeOpenAI:
    """Threaded server on 127.0.0.1 (random port). `requests` holds every parsed request body."""

    def __init__(self, respond: Callable[[dict[str, Any]], Reply]):
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(request)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server.respond(request)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    payload = json.dumps(reply.body or {}).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
