"""Lookups that 404 and permission checks that 403, following Mattermost's default roles.

A system admin may do anything. Otherwise: a public channel is readable by the
members of its team; private, direct and group channels only by their members;
posting, reacting and uploading need channel membership; adding others to a
channel needs its membership too (or team admin), joining a public one only the team's.
"""

from __future__ import annotations

from mcp_wrappers.mattermost_compat.db import Row, Tx
from mcp_wrappers.mattermost_compat.errors import ApiError, forbidden, not_found
from mcp_wrappers.mattermost_compat.web import Ctx


async def get_user(tx: Tx, user_id: str) -> Row:
    row = await tx.one("SELECT * FROM users WHERE id = %s", user_id)
    if row is None:
        raise ApiError(
            404, "app.user.missing_account.const", "Unable to find the user.", f"user_id={user_id}"
        )
    return row


async def get_team(tx: Tx, team_id: str) -> Row:
    row = await tx.one("SELECT * FROM teams WHERE id = %s AND delete_at = 0", team_id)
    if row is None:
        raise not_found("team", f"team_id={team_id}")
    return row


async def get_channel(tx: Tx, channel_id: str) -> Row:
    row = await tx.one("SELECT * FROM channels WHERE id = %s", channel_id)
    if row is None:
        raise ApiError(
            404,
            "app.channel.get.existing.app_error",
            "Unable to find the existing channel.",
            f"channel_id={channel_id}",
        )
    return row


async def get_post(tx: Tx, post_id: str) -> Row:
    row = await tx.one("SELECT * FROM posts WHERE id = %s AND delete_at = 0", post_id)
    if row is None:
        raise ApiError(404, "app.post.get.app_error", "Unable to get the post.", f"post_id={post_id}")
    return row


async def is_team_member(tx: Tx, team_id: str, user_id: str) -> bool:
    return bool(
        await tx.one(
            "SELECT 1 FROM team_members WHERE team_id = %s AND user_id = %s AND delete_at = 0",
            team_id,
            user_id,
        )
    )


async def is_team_admin(tx: Tx, team_id: str, user_id: str) -> bool:
    return bool(
        await tx.one(
            "SELECT 1 FROM team_members WHERE team_id = %s AND user_id = %s AND delete_at = 0 "
            "AND roles LIKE '%%team_admin%%'",
            team_id,
            user_id,
        )
    )


async def is_channel_member(tx: Tx, channel_id: str, user_id: str) -> bool:
    return bool(
        await tx.one(
            "SELECT 1 FROM channel_members WHERE channel_id = %s AND user_id = %s", channel_id, user_id
        )
    )


async def can_read_channel(ctx: Ctx, channel: Row) -> bool:
    if ctx.is_admin or await is_channel_member(ctx.tx, channel["id"], ctx.me["id"]):
        return True
    return channel["type"] == "O" and await is_team_member(ctx.tx, channel["team_id"], ctx.me["id"])


async def require_read(ctx: Ctx, channel: Row) -> None:
    if not await can_read_channel(ctx, channel):
        raise forbidden("read_channel")


async def require_member(ctx: Ctx, channel: Row, permission: str) -> None:
    if not ctx.is_admin and not await is_channel_member(ctx.tx, channel["id"], ctx.me["id"]):
        raise forbidden(permission)


async def require_team_member(ctx: Ctx, team_id: str) -> None:
    if not ctx.is_admin and not await is_team_member(ctx.tx, team_id, ctx.me["id"]):
        raise forbidden("view_team")


def require_self_or_admin(ctx: Ctx, user_id: str) -> None:
    if not ctx.is_admin and ctx.me["id"] != user_id:
        raise forbidden("edit_other_users")


def require_admin(ctx: Ctx) -> None:
    if not ctx.is_admin:
        raise forbidden("manage_system")
