"""Events for the WebSocket stream: who gets what, and each connection's queue and seq.

One chat service process serves a sandbox, so the hub is an in-memory set of connections.
Handlers add events to their Ctx; the endpoint wrapper publishes them once the transaction
has committed, so nobody hears of a post that was rolled back.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from mcp_wrappers.mattermost_compat import ids
from mcp_wrappers.mattermost_compat.db import Tx

QUEUE_LIMIT = 1000  # events waiting for a slow reader; past this the connection is dropped


@dataclass
class Event:
    event: str
    data: dict[str, Any]
    broadcast: dict[str, Any]
    user_ids: frozenset[str]  # who gets it: the channel's members or the one user


def broadcast(user_id: str = "", channel_id: str = "", team_id: str = "") -> dict[str, Any]:
    return {
        "omit_users": None,
        "user_id": user_id,
        "channel_id": channel_id,
        "team_id": team_id,
        "connection_id": "",
        "omit_connection_id": "",
    }


@dataclass(eq=False)
class Connection:
    user_id: str
    id: str = field(default_factory=ids.new_id)
    seq: int = 0
    # events for it and replies to its actions, in the order they are to be sent
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_LIMIT))


class Hub:
    def __init__(self) -> None:
        self.connections: set[Connection] = set()

    def publish(self, event: Event) -> None:
        """Queue the event for every connection of its users (never waits: slow readers are dropped)."""
        for conn in list(self.connections):
            if conn.user_id in event.user_ids:
                try:
                    conn.queue.put_nowait(event)
                except asyncio.QueueFull:
                    self.connections.discard(conn)


def frame(conn: Connection, event: str, data: dict, where: dict) -> str:
    """An event as Mattermost writes it; seq counts the connection's events from 0 (hello)."""
    message = json.dumps({"event": event, "data": data, "broadcast": where, "seq": conn.seq})
    conn.seq += 1
    return message


async def to_channel(tx: Tx, event: str, data: dict[str, Any], channel_id: str, team_id: str = "") -> Event:
    """An event for every member of the channel (as Mattermost broadcasts posts)."""
    rows = await tx.all("SELECT user_id FROM channel_members WHERE channel_id = %s", channel_id)
    where = broadcast(channel_id=channel_id, team_id=team_id)
    return Event(event, data, where, frozenset(r["user_id"] for r in rows))
