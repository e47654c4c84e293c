"""`GET /api/v4/websocket`: Mattermost's event stream.

A client authenticates with its token in the Authorization header (or the MMAUTHTOKEN cookie),
or with an `authentication_challenge` action as its first message (answered, after `hello`,
with {"status": "OK", "seq_reply": <its seq>}); it then gets `hello` (seq 0) and every event
broadcast to it. Other actions (user_typing, get_statuses, ...) are acknowledged and change
nothing. A connection that does not authenticate is closed, as Mattermost closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from mcp_wrappers.mattermost_compat.api_system import VERSION_ID
from mcp_wrappers.mattermost_compat.events import Connection, Event, Hub, broadcast, frame
from mcp_wrappers.mattermost_compat.web import bearer_token, session_user

CHALLENGE_TIMEOUT_S = 60


async def _user_id(websocket: WebSocket, token: Any) -> str:
    if not isinstance(token, str) or not token:
        return ""
    async with websocket.app.state.db.transaction() as tx:
        user, _ = await session_user(tx, token)
    return user["id"] if user else ""


async def _challenge(websocket: WebSocket) -> tuple[str, Any]:
    """(user id, seq of the challenge) from the first message; ("", None) if it does not authenticate."""
    try:
        message = json.loads(await asyncio.wait_for(websocket.receive_text(), CHALLENGE_TIMEOUT_S))
    except (ValueError, TimeoutError, WebSocketDisconnect, KeyError):
        return "", None
    if not isinstance(message, dict) or message.get("action") != "authentication_challenge":
        return "", None
    data = message.get("data") if isinstance(message.get("data"), dict) else {}
    return await _user_id(websocket, data.get("token")), message.get("seq")


def _reply(seq: Any) -> str:
    return json.dumps({"status": "OK", "seq_reply": seq})


async def _write(websocket: WebSocket, conn: Connection) -> None:
    """The connection's only sender: queued events get their seq here, in sending order."""
    while True:
        item: Event | str = await conn.queue.get()
        if isinstance(item, Event):
            item = frame(conn, item.event, item.data, item.broadcast)
        await websocket.send_text(item)


async def websocket_endpoint(websocket: WebSocket) -> None:
    await websocket.accept()
    token = bearer_token(websocket)
    user_id, seq = (await _user_id(websocket, token), None) if token else await _challenge(websocket)
    if not user_id:
        await websocket.close(code=1008)
        return
    hub: Hub = websocket.app.state.hub
    conn = Connection(user_id)
    hello = {"connection_id": conn.id, "server_hostname": socket.gethostname(), "server_version": VERSION_ID}
    await websocket.send_text(frame(conn, "hello", hello, broadcast(user_id=user_id)))
    if seq is not None:
        await websocket.send_text(_reply(seq))
    hub.connections.add(conn)
    writer = asyncio.create_task(_write(websocket, conn))
    try:
        while not writer.done():
            try:
                message = json.loads(await websocket.receive_text())
            except ValueError:
                continue
            if isinstance(message, dict) and "seq" in message:
                conn.queue.put_nowait(_reply(message["seq"]))
    except (WebSocketDisconnect, KeyError, asyncio.QueueFull):
        pass  # KeyError: Starlette's receive_text on a binary frame
    finally:
        hub.connections.discard(conn)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer


ROUTES = [WebSocketRoute("/api/v4/websocket", websocket_endpoint)]
