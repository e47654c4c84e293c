"""Users, login and personal access tokens."""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_wrappers.mattermost_compat import ids, perms, views
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import Ctx, body_int, endpoint, require_str

USERNAME_RE = re.compile(r"^[a-z][a-z0-9.\-_]{2,21}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+$")
VALID_ROLES = {"system_user", "system_admin", "system_user_access_token"}
USER_ORDER = " ORDER BY username"


async def create_user(ctx: Ctx) -> tuple[int, Any]:
    """The first account needs no session and becomes system admin (Mattermost's bootstrap rule)."""
    body = await ctx.json()
    first = not await ctx.tx.value("SELECT count(*) FROM users")
    if not first and ctx.user is None:
        raise ApiError(403, "api.user.create_user.no_open_server", "This server does not allow open signups.")
    if not first and not ctx.is_admin:
        raise forbidden("create_user")
    username = require_str(body, "username").lower()
    email = require_str(body, "email").lower()
    password = require_str(body, "password")
    if not USERNAME_RE.match(username):
        raise ApiError(
            400,
            "model.user.is_valid.username.app_error",
            "Username must begin with a letter and contain 3 to 22 lowercase letters, numbers, "
            "and the symbols '.', '-', and '_'.",
        )
    if not EMAIL_RE.match(email):
        raise ApiError(400, "model.user.is_valid.email.app_error", "Invalid email.")
    if len(password) < 8:
        raise ApiError(
            400,
            "model.user.is_valid.pwd_length.app_error",
            "Your password must contain at least 8 characters.",
        )
    for field, value in (("username", username), ("email", email)):
        if await ctx.tx.one(f"SELECT 1 FROM users WHERE {field} = %s", value):
            raise ApiError(
                400,
                f"app.user.save.{field}_exists.app_error",
                f"An account with that {field} already exists.",
            )
    now = ids.now_ms()
    row = await ctx.tx.one(
        "INSERT INTO users (id, username, email, first_name, last_name, nickname, position, roles, password_hash,"
        " create_at, update_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING *",
        ids.new_id(),
        username,
        email,
        *(str(body.get(k) or "") for k in ("first_name", "last_name", "nickname", "position")),
        "system_admin system_user" if first else "system_user",
        ids.hash_password(password),
        now,
        now,
    )
    return 201, views.user(row)


async def login(ctx: Ctx) -> JSONResponse:
    body = await ctx.json()
    login_id, password = str(body.get("login_id", "")).lower(), str(body.get("password", ""))
    row = await ctx.tx.one(
        "SELECT * FROM users WHERE (username = %s OR email = %s) AND delete_at = 0", login_id, login_id
    )
    if row is None or not ids.check_password(password, row["password_hash"]):
        raise ApiError(
            401,
            "api.user.login.invalid_credentials_email_username",
            "Enter a valid email or username and/or password.",
        )
    token = ids.new_id()
    await ctx.tx.run(
        "INSERT INTO tokens (id, digest, user_id, kind, create_at) VALUES (%s,%s,%s,'session',%s)",
        ids.new_id(),
        ids.token_digest(token),
        row["id"],
        ids.now_ms(),
    )
    # 200 as Mattermost answers (its OpenAPI documentation says 201; clients check for 200)
    return JSONResponse(
        views.user(row), status_code=200, headers={"Token": token, "X-Request-Id": ctx.request_id}
    )


async def logout(ctx: Ctx) -> tuple[int, Any]:
    """Ends the session that made the call (200, as Mattermost answers)."""
    await ctx.tx.run("UPDATE tokens SET is_active = false WHERE id = %s AND kind = 'session'", ctx.session_id)
    return 200, {"status": "OK"}


async def get_user(ctx: Ctx) -> tuple[int, Any]:
    return 200, views.user(await perms.get_user(ctx.tx, ctx.path("user_id")))


async def get_user_by_username(ctx: Ctx) -> tuple[int, Any]:
    name = ctx.request.path_params["username"].lower()
    row = await ctx.tx.one("SELECT * FROM users WHERE username = %s", name)
    if row is None:
        raise ApiError(
            404,
            "app.user.get_by_username.app_error",
            "Unable to find an existing account matching your "
            "username for this team. This team may require an invite from the team owner to join.",
            f"username={name}",
        )
    return 200, views.user(row)


async def list_users(ctx: Ctx) -> tuple[int, Any]:
    limit, offset = ctx.paging()
    where, args = ["TRUE"], []
    filters = {
        "in_team": "id IN (SELECT user_id FROM team_members WHERE team_id = %s AND delete_at = 0)",
        "not_in_team": "id NOT IN (SELECT user_id FROM team_members WHERE team_id = %s AND delete_at = 0)",
        "in_channel": "id IN (SELECT user_id FROM channel_members WHERE channel_id = %s)",
        "not_in_channel": "id NOT IN (SELECT user_id FROM channel_members WHERE channel_id = %s)",
    }
    for name, clause in filters.items():
        if value := ctx.query(name):
            if not ids.is_id(value):
                raise bad_param(name, "url")
            where.append(clause)
            args.append(value)
    if ctx.query_bool("active"):
        where.append("delete_at = 0")
    if ctx.query_bool("inactive"):
        where.append("delete_at <> 0")
    rows = await ctx.tx.all(
        f"SELECT * FROM users WHERE {' AND '.join(where)}{USER_ORDER} LIMIT %s OFFSET %s",
        *args,
        limit,
        offset,
    )
    return 200, [views.user(r) for r in rows]


async def search_users(ctx: Ctx) -> tuple[int, Any]:
    body = await ctx.json()
    term = require_str(body, "term", optional=True).strip().lstrip("@").lower()
    limit = min(1000, max(1, body_int(body, "limit", 100)))
    like = f"%{term}%"
    where = [
        "(username ILIKE %s OR email ILIKE %s OR nickname ILIKE %s OR (first_name || ' ' || last_name) ILIKE %s)"
    ]
    args: list[Any] = [like] * 4
    scoped = {
        "team_id": "id IN (SELECT user_id FROM team_members WHERE team_id = %s AND delete_at = 0)",
        "in_channel_id": "id IN (SELECT user_id FROM channel_members WHERE channel_id = %s)",
        "not_in_channel_id": "id NOT IN (SELECT user_id FROM channel_members WHERE channel_id = %s)",
    }
    for name, clause in scoped.items():
        if value := body.get(name):
            where.append(clause)
            args.append(str(value))
    if not body.get("allow_inactive"):
        where.append("delete_at = 0")
    rows = await ctx.tx.all(
        f"SELECT * FROM users WHERE {' AND '.join(where)}{USER_ORDER} LIMIT %s", *args, limit
    )
    return 200, [views.user(r) for r in rows]


async def autocomplete(ctx: Ctx) -> tuple[int, Any]:
    """Users whose username, first or last name or nickname starts with `name`, in a team (and channel)."""
    name = ctx.query("name").strip().lstrip("@").lower()
    limit = min(100, max(1, ctx.query_int("limit", 100)))
    where = [
        "delete_at = 0",
        "(username LIKE %s OR lower(first_name) LIKE %s OR lower(last_name) LIKE %s OR lower(nickname) LIKE %s)",
    ]
    prefix = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    args: list[Any] = [prefix] * 4
    if team_id := ctx.query("in_team"):
        if not ids.is_id(team_id):
            raise bad_param("in_team", "url")
        where.append("id IN (SELECT user_id FROM team_members WHERE team_id = %s AND delete_at = 0)")
        args.append(team_id)
    base = f"SELECT * FROM users WHERE {' AND '.join(where)}"
    channel_id = ctx.query("in_channel")
    if not channel_id:
        rows = await ctx.tx.all(base + USER_ORDER + " LIMIT %s", *args, limit)
        return 200, {"users": [views.user(r) for r in rows]}
    if not ids.is_id(channel_id):
        raise bad_param("in_channel", "url")
    await perms.require_read(ctx, await perms.get_channel(ctx.tx, channel_id))
    member = "id IN (SELECT user_id FROM channel_members WHERE channel_id = %s)"
    inside = await ctx.tx.all(f"{base} AND {member}{USER_ORDER} LIMIT %s", *args, channel_id, limit)
    outside = await ctx.tx.all(f"{base} AND NOT {member}{USER_ORDER} LIMIT %s", *args, channel_id, limit)
    return 200, {"users": [views.user(r) for r in inside], "out_of_channel": [views.user(r) for r in outside]}


async def users_by_ids(ctx: Ctx) -> tuple[int, Any]:
    wanted = [str(v) for v in await ctx.json(list)]
    rows = await ctx.tx.all(f"SELECT * FROM users WHERE id = ANY(%s){USER_ORDER}", wanted)
    return 200, [views.user(r) for r in rows]


async def users_by_usernames(ctx: Ctx) -> tuple[int, Any]:
    wanted = [str(v).lower() for v in await ctx.json(list)]
    rows = await ctx.tx.all(f"SELECT * FROM users WHERE username = ANY(%s){USER_ORDER}", wanted)
    return 200, [views.user(r) for r in rows]


async def update_roles(ctx: Ctx) -> tuple[int, Any]:
    perms.require_admin(ctx)
    user = await perms.get_user(ctx.tx, ctx.path("user_id"))
    roles = require_str(await ctx.json(), "roles").split()
    if not roles or not set(roles) <= VALID_ROLES or "system_user" not in roles:
        raise ApiError(
            400,
            "api.user.update_user_roles.bad_parameter",
            "Invalid roles parameter.",
            f"roles must include system_user and be among {sorted(VALID_ROLES)}",
        )
    await ctx.tx.run(
        "UPDATE users SET roles = %s, update_at = %s WHERE id = %s", " ".join(roles), ids.now_ms(), user["id"]
    )
    return 200, {"status": "OK"}


async def create_token(ctx: Ctx) -> tuple[int, Any]:
    user_id = ctx.path("user_id")
    body = await ctx.json()
    description = require_str(body, "description")
    allowed = ctx.is_admin or (
        ctx.me["id"] == user_id and "system_user_access_token" in ctx.me["roles"].split()
    )
    if not allowed:
        raise forbidden("create_user_access_token")
    await perms.get_user(ctx.tx, user_id)
    token, token_id = ids.new_id(), ids.new_id()
    await ctx.tx.run(
        "INSERT INTO tokens (id, digest, user_id, kind, description, create_at) "
        "VALUES (%s,%s,%s,'pat',%s,%s)",
        token_id,
        ids.token_digest(token),
        user_id,
        description,
        ids.now_ms(),
    )
    return 200, {  # 200 as Mattermost answers (documented as 201)
        "id": token_id,
        "token": token,
        "user_id": user_id,
        "description": description,
        "is_active": True,
    }


async def revoke_token(ctx: Ctx) -> tuple[int, Any]:
    token_id = require_str(await ctx.json(), "token_id")
    row = await ctx.tx.one("SELECT * FROM tokens WHERE id = %s AND kind = 'pat'", token_id)
    if row is None:
        raise ApiError(
            404, "app.user_access_token.get_by_token.app_error", "Unable to get user access token."
        )
    perms.require_self_or_admin(ctx, row["user_id"])
    await ctx.tx.run("DELETE FROM tokens WHERE id = %s", token_id)
    return 200, {"status": "OK"}


ROUTES = [
    Route("/api/v4/users", endpoint(create_user, auth=False), methods=["POST"]),
    Route("/api/v4/users", endpoint(list_users), methods=["GET"]),
    Route("/api/v4/users/login", endpoint(login, auth=False), methods=["POST"]),
    Route("/api/v4/users/logout", endpoint(logout), methods=["POST"]),
    Route("/api/v4/users/autocomplete", endpoint(autocomplete), methods=["GET"]),
    Route("/api/v4/users/search", endpoint(search_users), methods=["POST"]),
    Route("/api/v4/users/ids", endpoint(users_by_ids), methods=["POST"]),
    Route("/api/v4/users/usernames", endpoint(users_by_usernames), methods=["POST"]),
    Route("/api/v4/users/tokens/revoke", endpoint(revoke_token), methods=["POST"]),
    Route("/api/v4/users/username/{username}", endpoint(get_user_by_username), methods=["GET"]),
    Route("/api/v4/users/{user_id}", endpoint(get_user), methods=["GET"]),
    Route("/api/v4/users/{user_id}/roles", endpoint(update_roles), methods=["PUT"]),
    Route("/api/v4/users/{user_id}/tokens", endpoint(create_token), methods=["POST"]),
]
