"""Channels (public, private, direct, group) and channel membership."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import ids, perms, views
from mcp_wrappers.mattermost_compat.api_teams import DEFAULT_CHANNELS, add_channel_member
from mcp_wrappers.mattermost_compat.db import Row
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint, require_str

CHANNEL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")
ORDER = " ORDER BY c.display_name, c.name"


async def create_channel(ctx: Ctx) -> tuple[int, Any]:
    body = await ctx.json()
    team = await perms.get_team(ctx.tx, require_str(body, "team_id"))
    name, display = require_str(body, "name").lower(), require_str(body, "display_name")
    kind = body.get("type")
    if kind not in ("O", "P"):
        raise bad_param("type")
    if not CHANNEL_NAME_RE.match(name) or len(display) > 64:
        raise ApiError(
            400,
            "model.channel.is_valid.name.app_error",
            "Channel name must be 1-64 lowercase letters, numbers, '-' or '_', starting with a letter or "
            "number; display name at most 64 characters.",
        )
    await perms.require_team_member(ctx, team["id"])
    if await ctx.tx.one("SELECT 1 FROM channels WHERE team_id = %s AND name = %s", team["id"], name):
        raise ApiError(
            400,
            "store.sql_channel.save_channel.exists.app_error",
            "A channel with that name already exists on the same team.",
        )
    now = ids.now_ms()
    row = await ctx.tx.one(
        "INSERT INTO channels (id, team_id, type, name, display_name, header, purpose, creator_id, create_at,"
        " update_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING *",
        ids.new_id(),
        team["id"],
        kind,
        name,
        display,
        str(body.get("header") or ""),
        str(body.get("purpose") or ""),
        ctx.me["id"],
        now,
        now,
    )
    await add_channel_member(ctx.tx, row["id"], ctx.me["id"], "channel_user channel_admin")
    return 201, views.channel(row)


async def all_channels(ctx: Ctx) -> tuple[int, Any]:
    perms.require_admin(ctx)
    limit, offset = ctx.paging(default_per_page=200)
    deleted = "" if ctx.query_bool("include_deleted") else " AND c.delete_at = 0"
    rows = await ctx.tx.all(
        "SELECT c.*, t.name AS team_name, t.display_name AS team_display_name, t.update_at AS team_update_at "
        f"FROM channels c JOIN teams t ON t.id = c.team_id WHERE c.type IN ('O','P'){deleted}{ORDER} "
        "LIMIT %s OFFSET %s",
        limit,
        offset,
    )
    return 200, [
        views.channel(r) | {k: r[k] for k in ("team_name", "team_display_name", "team_update_at")}
        for r in rows
    ]


async def get_channel(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    return 200, views.channel(channel)


async def public_channels(ctx: Ctx) -> tuple[int, Any]:
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    await perms.require_team_member(ctx, team["id"])
    limit, offset = ctx.paging()
    rows = await ctx.tx.all(
        f"SELECT c.* FROM channels c WHERE c.team_id = %s AND c.type = 'O' AND c.delete_at = 0"
        f"{ORDER} LIMIT %s OFFSET %s",
        team["id"],
        limit,
        offset,
    )
    return 200, [views.channel(r) for r in rows]


async def _by_name(ctx: Ctx, team: Row, name: str) -> tuple[int, Any]:
    deleted = "" if ctx.query_bool("include_deleted") else " AND delete_at = 0"
    row = await ctx.tx.one(
        f"SELECT * FROM channels WHERE team_id = %s AND name = %s{deleted}", team["id"], name.lower()
    )
    if row is None:
        raise ApiError(
            404, "app.channel.get_by_name.missing.app_error", "Channel does not exist.", f"name={name}"
        )
    await perms.require_read(ctx, row)
    return 200, views.channel(row)


async def channel_by_name(ctx: Ctx) -> tuple[int, Any]:
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    return await _by_name(ctx, team, ctx.request.path_params["channel_name"])


async def channel_by_team_and_channel_name(ctx: Ctx) -> tuple[int, Any]:
    team_name = ctx.request.path_params["team_name"].lower()
    team = await ctx.tx.one("SELECT * FROM teams WHERE name = %s AND delete_at = 0", team_name)
    if team is None:
        raise ApiError(404, "app.team.get_by_name.missing.app_error", "Unable to find the existing team.")
    return await _by_name(ctx, team, ctx.request.path_params["channel_name"])


async def search_channels(ctx: Ctx) -> tuple[int, Any]:
    """Public channels of the team whose name or display name contains the term (201, as documented)."""
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    await perms.require_team_member(ctx, team["id"])
    term = require_str(await ctx.json(), "term", optional=True).strip().lstrip("~#").lower()
    like = f"%{term}%"
    rows = await ctx.tx.all(
        f"SELECT c.* FROM channels c WHERE c.team_id = %s AND c.type = 'O' AND c.delete_at = 0 "
        f"AND (c.name ILIKE %s OR c.display_name ILIKE %s){ORDER} LIMIT 100",
        team["id"],
        like,
        like,
    )
    return 201, [views.channel(r) for r in rows]


async def user_channels_in_team(ctx: Ctx) -> tuple[int, Any]:
    """The user's channels in a team, plus their direct and group channels (as Mattermost lists them)."""
    user_id, team_id = ctx.path("user_id"), ctx.path("team_id")
    perms.require_self_or_admin(ctx, user_id)
    await perms.get_team(ctx.tx, team_id)
    rows = await ctx.tx.all(
        f"SELECT c.* FROM channels c JOIN channel_members m ON m.channel_id = c.id "
        f"WHERE m.user_id = %s AND (c.team_id = %s OR c.team_id = '') AND c.delete_at = 0{ORDER}",
        user_id,
        team_id,
    )
    return 200, [views.channel(r) for r in rows]


async def user_channels(ctx: Ctx) -> tuple[int, Any]:
    user_id = ctx.path("user_id")
    perms.require_self_or_admin(ctx, user_id)
    await perms.get_user(ctx.tx, user_id)
    rows = await ctx.tx.all(
        f"SELECT c.* FROM channels c JOIN channel_members m ON m.channel_id = c.id "
        f"WHERE m.user_id = %s AND c.delete_at = 0{ORDER}",
        user_id,
    )
    return 200, [views.channel(r) for r in rows]


async def _open_private(ctx: Ctx, user_ids: list[str], kind: str) -> tuple[int, Any]:
    users = await ctx.tx.all(
        "SELECT * FROM users WHERE id = ANY(%s) AND delete_at = 0 ORDER BY username", user_ids
    )
    if len(users) != len(set(user_ids)):
        raise ApiError(
            400,
            "api.channel.create_direct_channel.invalid_user.app_error",
            "Invalid user ID for direct or group channel creation.",
            f"unknown user ids among {user_ids}",
        )
    if ctx.me["id"] not in user_ids and not ctx.is_admin:
        raise forbidden("create_direct_channel")
    sorted_ids = sorted(set(user_ids))
    if kind == "D":
        name, display = "__".join(sorted(user_ids)), ""
    else:
        name, display = (
            hashlib.sha1(",".join(sorted_ids).encode()).hexdigest(),
            ", ".join(u["username"] for u in users),
        )
    row = await ctx.tx.one("SELECT * FROM channels WHERE team_id = '' AND name = %s", name)
    if row is None:
        now = ids.now_ms()
        row = await ctx.tx.one(
            "INSERT INTO channels (id, type, name, display_name, creator_id, create_at, update_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s) RETURNING *",
            ids.new_id(),
            kind,
            name,
            display,
            ctx.me["id"],
            now,
            now,
        )
        for user_id in sorted_ids:
            await add_channel_member(ctx.tx, row["id"], user_id)
    return 201, views.channel(row)


async def direct_channel(ctx: Ctx) -> tuple[int, Any]:
    user_ids = [str(v) for v in await ctx.json(list)]
    if len(user_ids) != 2:
        raise bad_param("user_ids")
    return await _open_private(ctx, user_ids, "D")


async def group_channel(ctx: Ctx) -> tuple[int, Any]:
    user_ids = sorted({str(v) for v in await ctx.json(list)} | {ctx.me["id"]})
    if not 3 <= len(user_ids) <= 8:
        raise ApiError(
            400,
            "api.channel.create_group.bad_size.app_error",
            "Group message channels must contain at least 3 and no more than 8 users.",
        )
    return await _open_private(ctx, user_ids, "G")


async def list_members(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    limit, offset = ctx.paging()
    rows = await ctx.tx.all(
        "SELECT m.* FROM channel_members m JOIN users u ON u.id = m.user_id "
        "WHERE m.channel_id = %s ORDER BY u.username LIMIT %s OFFSET %s",
        channel["id"],
        limit,
        offset,
    )
    return 200, [views.channel_member(r) for r in rows]


async def get_member(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    row = await ctx.tx.one(
        "SELECT * FROM channel_members WHERE channel_id = %s AND user_id = %s",
        channel["id"],
        ctx.path("user_id"),
    )
    if row is None:
        raise ApiError(
            404,
            "app.channel.get_member.missing.app_error",
            "No channel member found for that user ID and channel ID.",
        )
    return 200, views.channel_member(row)


async def view_channel(ctx: Ctx) -> tuple[int, Any]:
    """Mark a channel read for the user: last_viewed_at now, every message counted as seen."""
    user_id = ctx.path("user_id")
    perms.require_self_or_admin(ctx, user_id)
    body = await ctx.json()
    channel_id = require_str(body, "channel_id", optional=True)
    times: dict[str, int] = {}
    if channel_id:
        if not ids.is_id(channel_id):
            raise bad_param("channel_id")
        now = ids.now_ms()
        await ctx.tx.run(
            "UPDATE channel_members m SET last_viewed_at = %s, last_update_at = %s, msg_count = c.total_msg_count "
            "FROM channels c WHERE c.id = m.channel_id AND m.channel_id = %s AND m.user_id = %s",
            now,
            now,
            channel_id,
            user_id,
        )
        times[channel_id] = now
    return 200, {"status": "OK", "last_viewed_at_times": times}


async def channel_stats(ctx: Ctx) -> tuple[int, Any]:
    """Member, pinned-post and file counts; files_count is -1 when `exclude_files_count=true`, as in Mattermost."""
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    counts = await ctx.tx.one(
        "SELECT (SELECT count(*) FROM channel_members WHERE channel_id = %s) AS members, "
        "(SELECT count(*) FROM posts WHERE channel_id = %s AND is_pinned AND delete_at = 0) AS pinned, "
        "(SELECT count(*) FROM files WHERE channel_id = %s AND post_id <> '' AND delete_at = 0) AS files",
        channel["id"],
        channel["id"],
        channel["id"],
    )
    assert counts is not None
    files = -1 if ctx.query_bool("exclude_files_count") else counts["files"]
    return 200, {
        "channel_id": channel["id"],
        "member_count": counts["members"],
        "guest_count": 0,
        "pinnedpost_count": counts["pinned"],
        "files_count": files,
    }


async def user_channel_members(ctx: Ctx) -> tuple[int, Any]:
    """The user's memberships of a team's channels and of their direct and group channels."""
    user_id, team_id = ctx.path("user_id"), ctx.path("team_id")
    perms.require_self_or_admin(ctx, user_id)
    await perms.get_team(ctx.tx, team_id)
    rows = await ctx.tx.all(
        "SELECT m.* FROM channel_members m JOIN channels c ON c.id = m.channel_id "
        "WHERE m.user_id = %s AND (c.team_id = %s OR c.team_id = '') AND c.delete_at = 0 ORDER BY c.name",
        user_id,
        team_id,
    )
    return 200, [views.channel_member(r) for r in rows]


async def _require_manage_members(ctx: Ctx, channel: Row, target_id: str) -> None:
    if channel["type"] in ("D", "G"):
        raise ApiError(
            400,
            "api.channel.add_user_to_channel.type.app_error",
            "Can not add or remove users of a direct or group message channel.",
        )
    # Mattermost: managing members is a channel-scoped permission (channel members and team admins
    # have it); joining a public channel of your team needs no more than team membership.
    if ctx.is_admin or await perms.is_channel_member(ctx.tx, channel["id"], ctx.me["id"]):
        return
    joining = channel["type"] == "O" and target_id == ctx.me["id"]
    if joining and await perms.is_team_member(ctx.tx, channel["team_id"], ctx.me["id"]):
        return
    if await perms.is_team_admin(ctx.tx, channel["team_id"], ctx.me["id"]):
        return
    raise forbidden(
        "manage_private_channel_members" if channel["type"] == "P" else "manage_public_channel_members"
    )


async def add_member(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    body = await ctx.json()
    user_ids = body.get("user_ids") or ([body["user_id"]] if body.get("user_id") else [])
    if not user_ids or not all(isinstance(u, str) and ids.is_id(u) for u in user_ids):
        raise bad_param("user_id")
    members = []
    for user_id in user_ids:
        await _require_manage_members(ctx, channel, user_id)
        await perms.get_user(ctx.tx, user_id)
        if not await perms.is_team_member(ctx.tx, channel["team_id"], user_id):
            raise ApiError(
                403,
                "api.channel.add_members.user_denied",
                "The user is not a member of the channel's team.",
                f"user_id={user_id}",
            )
        members.append(views.channel_member(await add_channel_member(ctx.tx, channel["id"], user_id)))
    return 201, members[0] if "user_ids" not in body else members


async def remove_member(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    user_id = ctx.path("user_id")
    if channel["name"] == DEFAULT_CHANNELS[0][0] and channel["type"] == "O":
        raise ApiError(
            400, "api.channel.remove.default.app_error", "Unable to remove user from the default channel."
        )
    if user_id != ctx.me["id"]:
        await _require_manage_members(ctx, channel, user_id)
    elif channel["type"] in ("D", "G"):
        raise ApiError(400, "api.channel.remove.type.app_error", "Can not leave a direct message channel.")
    removed = await ctx.tx.run(
        "DELETE FROM channel_members WHERE channel_id = %s AND user_id = %s", channel["id"], user_id
    )
    if not removed:
        raise ApiError(
            404,
            "app.channel.get_member.missing.app_error",
            "No channel member found for that user ID and channel ID.",
        )
    return 200, {"status": "OK"}


ROUTES = [
    Route("/api/v4/channels", endpoint(create_channel), methods=["POST"]),
    Route("/api/v4/channels", endpoint(all_channels), methods=["GET"]),
    Route("/api/v4/channels/direct", endpoint(direct_channel), methods=["POST"]),
    Route("/api/v4/channels/group", endpoint(group_channel), methods=["POST"]),
    Route("/api/v4/channels/members/{user_id}/view", endpoint(view_channel), methods=["POST"]),
    Route("/api/v4/channels/{channel_id}", endpoint(get_channel), methods=["GET"]),
    Route("/api/v4/channels/{channel_id}/stats", endpoint(channel_stats), methods=["GET"]),
    Route("/api/v4/channels/{channel_id}/members", endpoint(list_members), methods=["GET"]),
    Route("/api/v4/channels/{channel_id}/members", endpoint(add_member), methods=["POST"]),
    Route("/api/v4/channels/{channel_id}/members/{user_id}", endpoint(get_member), methods=["GET"]),
    Route("/api/v4/channels/{channel_id}/members/{user_id}", endpoint(remove_member), methods=["DELETE"]),
    Route("/api/v4/teams/{team_id}/channels", endpoint(public_channels), methods=["GET"]),
    Route("/api/v4/teams/{team_id}/channels/search", endpoint(search_channels), methods=["POST"]),
    Route("/api/v4/teams/{team_id}/channels/name/{channel_name}", endpoint(channel_by_name), methods=["GET"]),
    Route(
        "/api/v4/teams/name/{team_name}/channels/name/{channel_name}",
        endpoint(channel_by_team_and_channel_name),
        methods=["GET"],
    ),
    Route(
        "/api/v4/users/{user_id}/teams/{team_id}/channels", endpoint(user_channels_in_team), methods=["GET"]
    ),
    Route(
        "/api/v4/users/{user_id}/teams/{team_id}/channels/members",
        endpoint(user_channel_members),
        methods=["GET"],
    ),
    Route("/api/v4/users/{user_id}/channels", endpoint(user_channels), methods=["GET"]),
]
