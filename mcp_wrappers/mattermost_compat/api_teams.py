"""Teams and team membership. Like Mattermost, a new team gets ~town-square and ~off-topic,
and everyone who joins the team joins those two channels."""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import ids, perms, views
from mcp_wrappers.mattermost_compat.db import Row, Tx
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint, require_str

TEAM_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9\-]{1,63}$")
DEFAULT_CHANNELS = (("town-square", "Town Square"), ("off-topic", "Off-Topic"))


async def add_channel_member(tx: Tx, channel_id: str, user_id: str, roles: str = "channel_user") -> Row:
    now = ids.now_ms()
    await tx.run(
        "INSERT INTO channel_members (channel_id, user_id, roles, last_update_at) VALUES (%s,%s,%s,%s) "
        "ON CONFLICT DO NOTHING",
        channel_id,
        user_id,
        roles,
        now,
    )
    return await tx.one(
        "SELECT * FROM channel_members WHERE channel_id = %s AND user_id = %s", channel_id, user_id
    )


async def join_team(tx: Tx, team_id: str, user_id: str, roles: str = "team_user") -> Row:
    await tx.run(
        "INSERT INTO team_members (team_id, user_id, roles) VALUES (%s,%s,%s) "
        "ON CONFLICT (team_id, user_id) DO UPDATE SET delete_at = 0",
        team_id,
        user_id,
        roles,
    )
    defaults = await tx.all(
        "SELECT id FROM channels WHERE team_id = %s AND name = ANY(%s)",
        team_id,
        [name for name, _ in DEFAULT_CHANNELS],
    )
    for row in defaults:
        await add_channel_member(tx, row["id"], user_id)
    return await tx.one("SELECT * FROM team_members WHERE team_id = %s AND user_id = %s", team_id, user_id)


async def create_team(ctx: Ctx) -> tuple[int, Any]:
    body = await ctx.json()
    name, display = require_str(body, "name").lower(), require_str(body, "display_name")
    kind = body.get("type", "O")
    if not TEAM_NAME_RE.match(name):
        raise ApiError(
            400,
            "model.team.is_valid.url.app_error",
            "Team name must be 2-64 lowercase letters, numbers or '-', starting with a letter or number.",
        )
    if kind not in ("O", "I"):
        raise bad_param("type")
    if await ctx.tx.one("SELECT 1 FROM teams WHERE name = %s", name):
        raise ApiError(400, "app.team.save.existing.app_error", "A team with that name already exists.")
    now = ids.now_ms()
    team = await ctx.tx.one(
        "INSERT INTO teams (id, name, display_name, description, type, email, invite_id, create_at, update_at) "
        "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING *",
        ids.new_id(),
        name,
        display,
        str(body.get("description") or ""),
        kind,
        ctx.me["email"],
        ids.new_id(),
        now,
        now,
    )
    for channel_name, channel_display in DEFAULT_CHANNELS:
        await ctx.tx.run(
            "INSERT INTO channels (id, team_id, type, name, display_name, creator_id, create_at, update_at)"
            " VALUES (%s,%s,'O',%s,%s,'',%s,%s)",
            ids.new_id(),
            team["id"],
            channel_name,
            channel_display,
            now,
            now,
        )
    await join_team(ctx.tx, team["id"], ctx.me["id"], "team_user team_admin")
    return 201, views.team(team)


async def _visible_team(ctx: Ctx, team: Row) -> Row:
    if team["type"] != "O":
        await perms.require_team_member(ctx, team["id"])
    return team


async def list_teams(ctx: Ctx) -> tuple[int, Any]:
    limit, offset = ctx.paging()
    rows = await ctx.tx.all(
        "SELECT * FROM teams WHERE delete_at = 0 AND (%s OR type = 'O' OR id IN "
        "(SELECT team_id FROM team_members WHERE user_id = %s AND delete_at = 0)) ORDER BY name LIMIT %s OFFSET %s",
        ctx.is_admin,
        ctx.me["id"],
        limit,
        offset,
    )
    return 200, [views.team(r) for r in rows]


async def get_team(ctx: Ctx) -> tuple[int, Any]:
    return 200, views.team(await _visible_team(ctx, await perms.get_team(ctx.tx, ctx.path("team_id"))))


async def get_team_by_name(ctx: Ctx) -> tuple[int, Any]:
    name = ctx.request.path_params["name"].lower()
    row = await ctx.tx.one("SELECT * FROM teams WHERE name = %s AND delete_at = 0", name)
    if row is None:
        raise ApiError(
            404, "app.team.get_by_name.missing.app_error", "Unable to find the existing team.", f"name={name}"
        )
    return 200, views.team(await _visible_team(ctx, row))


async def add_team_member(ctx: Ctx) -> tuple[int, Any]:
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    user_id = require_str(await ctx.json(), "user_id")
    await perms.get_user(ctx.tx, user_id)
    self_join = user_id == ctx.me["id"] and team["type"] == "O"
    team_admin = await ctx.tx.one(
        "SELECT 1 FROM team_members WHERE team_id = %s AND user_id = %s AND roles LIKE '%%team_admin%%'",
        team["id"],
        ctx.me["id"],
    )
    if not (ctx.is_admin or self_join or team_admin):
        raise forbidden("add_user_to_team")
    return 201, views.team_member(await join_team(ctx.tx, team["id"], user_id))


async def list_team_members(ctx: Ctx) -> tuple[int, Any]:
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    await perms.require_team_member(ctx, team["id"])
    limit, offset = ctx.paging()
    rows = await ctx.tx.all(
        "SELECT m.* FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id = %s "
        "AND m.delete_at = 0 ORDER BY u.username LIMIT %s OFFSET %s",
        team["id"],
        limit,
        offset,
    )
    return 200, [views.team_member(r) for r in rows]


async def user_teams(ctx: Ctx) -> tuple[int, Any]:
    user_id = ctx.path("user_id")
    perms.require_self_or_admin(ctx, user_id)
    rows = await ctx.tx.all(
        "SELECT t.* FROM teams t JOIN team_members m ON m.team_id = t.id WHERE m.user_id = %s "
        "AND m.delete_at = 0 AND t.delete_at = 0 ORDER BY t.name",
        user_id,
    )
    return 200, [views.team(r) for r in rows]


async def user_team_members(ctx: Ctx) -> tuple[int, Any]:
    """The user's team memberships."""
    user_id = ctx.path("user_id")
    perms.require_self_or_admin(ctx, user_id)
    rows = await ctx.tx.all(
        "SELECT m.* FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = %s "
        "AND m.delete_at = 0 AND t.delete_at = 0 ORDER BY t.name",
        user_id,
    )
    return 200, [views.team_member(r) for r in rows]


ROUTES = [
    Route("/api/v4/teams", endpoint(create_team), methods=["POST"]),
    Route("/api/v4/teams", endpoint(list_teams), methods=["GET"]),
    Route("/api/v4/teams/name/{name}", endpoint(get_team_by_name), methods=["GET"]),
    Route("/api/v4/teams/{team_id}", endpoint(get_team), methods=["GET"]),
    Route("/api/v4/teams/{team_id}/members", endpoint(add_team_member), methods=["POST"]),
    Route("/api/v4/teams/{team_id}/members", endpoint(list_team_members), methods=["GET"]),
    Route("/api/v4/users/{user_id}/teams", endpoint(user_teams), methods=["GET"]),
    Route("/api/v4/users/{user_id}/teams/members", endpoint(user_team_members), methods=["GET"]),
]
