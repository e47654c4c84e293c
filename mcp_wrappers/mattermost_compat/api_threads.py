"""Collapsed threads: the threads a user follows in a team (`/users/{user_id}/teams/{team_id}/threads`).

A user follows a thread when they wrote its root or a reply (Mattermost also follows on
mentions; there are no mention notifications here). Nothing is tracked as unread: the
counts are 0 and last_viewed_at is the user's last view of the channel.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import perms
from mcp_wrappers.mattermost_compat.api_posts import render
from mcp_wrappers.mattermost_compat.db import Row
from mcp_wrappers.mattermost_compat.errors import ApiError
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint

# roots of the team's threads (roots with replies) that the user wrote in, newest reply first
FOLLOWED = """
SELECT r.*, max(p.create_at) AS last_reply_at, count(*) AS replies,
       coalesce(max(m.last_viewed_at), 0) AS last_viewed_at
FROM posts r JOIN posts p ON p.root_id = r.id AND p.delete_at = 0
JOIN channels c ON c.id = r.channel_id AND c.delete_at = 0 AND (c.team_id = %s OR c.team_id = '')
LEFT JOIN channel_members m ON m.channel_id = c.id AND m.user_id = %s
WHERE r.delete_at = 0 AND r.root_id = '' AND {where}
  AND (r.user_id = %s OR EXISTS (SELECT 1 FROM posts q WHERE q.root_id = r.id AND q.user_id = %s))
GROUP BY r.id ORDER BY last_reply_at DESC, r.id
"""


async def _threads(ctx: Ctx, where: str = "true", *args: Any) -> list[Row]:
    user_id, team_id = ctx.path("user_id"), ctx.path("team_id")
    perms.require_self_or_admin(ctx, user_id)
    await perms.get_team(ctx.tx, team_id)
    sql = FOLLOWED.format(where=where)
    return await ctx.tx.all(sql, team_id, user_id, *args, user_id, user_id)


async def _view(ctx: Ctx, roots: list[Row]) -> list[dict]:
    posts = await render(ctx.tx, roots)
    views = []
    for root in roots:
        writers = await ctx.tx.all(
            "SELECT user_id FROM posts WHERE root_id = %s AND delete_at = 0 GROUP BY user_id "
            "ORDER BY min(create_at)",
            root["id"],
        )
        views.append(
            {
                "id": root["id"],
                "reply_count": root["replies"],
                "last_reply_at": root["last_reply_at"],
                "last_viewed_at": root["last_viewed_at"],
                "participants": [{"id": w["user_id"]} for w in writers],
                "post": posts[root["id"]],
                "unread_replies": 0,
                "unread_mentions": 0,
                "is_urgent": False,
                "delete_at": 0,
            }
        )
    return views


async def user_threads(ctx: Ctx) -> tuple[int, Any]:
    roots = await _threads(ctx)
    limit, offset = ctx.paging()
    totals = {"total": len(roots), "total_unread_threads": 0, "total_unread_mentions": 0}
    totals["total_unread_urgent_mentions"] = 0
    if ctx.query_bool("totalsOnly"):
        return 200, totals | {"threads": None}
    return 200, totals | {"threads": await _view(ctx, roots[offset : offset + limit])}


async def user_thread(ctx: Ctx) -> tuple[int, Any]:
    thread_id = ctx.path("thread_id")
    roots = await _threads(ctx, "r.id = %s", thread_id)
    if not roots:
        raise ApiError(404, "app.thread.get.app_error", "Unable to get the thread.", f"thread_id={thread_id}")
    return 200, (await _view(ctx, roots))[0]


ROUTES = [
    Route("/api/v4/users/{user_id}/teams/{team_id}/threads", endpoint(user_threads), methods=["GET"]),
    Route(
        "/api/v4/users/{user_id}/teams/{team_id}/threads/{thread_id}", endpoint(user_thread), methods=["GET"]
    ),
]
