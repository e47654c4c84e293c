"""User status (online / away / offline / dnd). No WebSocket here, so a status changes only when set."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import ids, perms
from mcp_wrappers.mattermost_compat.db import Row, Tx
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint, require_str

STATUSES = ("online", "away", "offline", "dnd")


def view(row: Row) -> dict[str, Any]:
    return {
        "user_id": row["user_id"],
        "status": row["status"],
        "manual": row["manual"],
        "last_activity_at": row["last_activity_at"],
    }


async def statuses(tx: Tx, user_ids: list[str]) -> list[dict[str, Any]]:
    """Known users' statuses; one never set is `offline` (as a Mattermost user without a session)."""
    stored = {
        r["user_id"]: r for r in await tx.all("SELECT * FROM statuses WHERE user_id = ANY(%s)", user_ids)
    }
    known = await tx.all("SELECT id FROM users WHERE id = ANY(%s) ORDER BY id", user_ids)
    default = {"status": "offline", "manual": False, "last_activity_at": 0}
    return [view(stored.get(u["id"]) or {"user_id": u["id"], **default}) for u in known]


async def get_status(ctx: Ctx) -> tuple[int, Any]:
    user = await perms.get_user(ctx.tx, ctx.path("user_id"))
    return 200, (await statuses(ctx.tx, [user["id"]]))[0]


async def set_status(ctx: Ctx) -> tuple[int, Any]:
    user_id = ctx.path("user_id")
    body = await ctx.json()
    if require_str(body, "user_id") != user_id:
        raise bad_param("user_id")
    status = require_str(body, "status")
    if status not in STATUSES:
        raise ApiError(400, "api.status.invalid_status.app_error", "Invalid status.", f"status={status}")
    perms.require_self_or_admin(ctx, user_id)
    await perms.get_user(ctx.tx, user_id)
    row = await ctx.tx.one(
        "INSERT INTO statuses (user_id, status, manual, last_activity_at) VALUES (%s,%s,true,%s) "
        "ON CONFLICT (user_id) DO UPDATE SET status = EXCLUDED.status, manual = true, "
        "last_activity_at = EXCLUDED.last_activity_at RETURNING *",
        user_id,
        status,
        ids.now_ms(),
    )
    return 200, view(row)


async def statuses_by_ids(ctx: Ctx) -> tuple[int, Any]:
    wanted = await ctx.json(list)
    if not wanted or not all(isinstance(u, str) and ids.is_id(u) for u in wanted):
        raise bad_param("user_ids")
    return 200, await statuses(ctx.tx, wanted)


ROUTES = [
    Route("/api/v4/users/status/ids", endpoint(statuses_by_ids), methods=["POST"]),
    Route("/api/v4/users/{user_id}/status", endpoint(get_status), methods=["GET"]),
    Route("/api/v4/users/{user_id}/status", endpoint(set_status), methods=["PUT"]),
]
