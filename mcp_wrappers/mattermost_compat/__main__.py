"""Run the chat service: `python3 -m mcp_wrappers.mattermost_compat` (env CHAT_HOST, CHAT_PORT, CHAT_DSN)."""

from __future__ import annotations

import os

import uvicorn

from mcp_wrappers.mattermost_compat.app import DEFAULT_DSN, build_app


def main() -> None:
    app = build_app(os.environ.get("CHAT_DSN", DEFAULT_DSN))
    uvicorn.run(
        app,
        host=os.environ.get("CHAT_HOST", "127.0.0.1"),
        port=int(os.environ.get("CHAT_PORT", "8065")),
        log_level="warning",
        access_log=bool(os.environ.get("CHAT_ACCESS_LOG")),
        lifespan="on",
    )


if __name__ == "__main__":
    main()
