"""Posts, threads, channel history (newest first), search and reactions."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import events, ids, perms, search, views
from mcp_wrappers.mattermost_compat.db import Row, Tx, jsonb
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import MAX_PER_PAGE, Ctx, body_int, endpoint, require_str

MAX_MESSAGE = 16383
MAX_FILES = 5
MAX_AROUND = 200  # posts on each side of the oldest unread one: larger limits are capped, as in Mattermost
EMOJI_RE = re.compile(r"^[a-zA-Z0-9_+\-]{1,64}$")
FILE_COLUMNS = (
    "id, creator_id, channel_id, post_id, name, extension, size, mime_type, create_at, update_at, delete_at"
)


async def render(tx: Tx, rows: list[Row]) -> dict[str, dict]:
    """Posts as API JSON keyed by id, with reactions, files and thread reply counts filled in."""
    if not rows:
        return {}
    post_ids = [r["id"] for r in rows]
    roots = list({r["root_id"] or r["id"] for r in rows})
    reactions = await tx.all(
        "SELECT r.*, p.channel_id FROM reactions r JOIN posts p ON p.id = r.post_id "
        "WHERE r.post_id = ANY(%s) ORDER BY r.create_at",
        post_ids,
    )
    files = await tx.all(
        f"SELECT {FILE_COLUMNS} FROM files WHERE post_id = ANY(%s) AND delete_at = 0 ORDER BY create_at",
        post_ids,
    )
    counts = {
        r["root_id"]: r["n"]
        for r in await tx.all(
            "SELECT root_id, count(*) AS n FROM posts WHERE root_id = ANY(%s) AND delete_at = 0 GROUP BY root_id",
            roots,
        )
    }
    return {
        r["id"]: views.post(
            r,
            [x for x in reactions if x["post_id"] == r["id"]],
            [f for f in files if f["post_id"] == r["id"]],
            counts.get(r["root_id"] or r["id"], 0),
        )
        for r in rows
    }


def post_list(order: list[Row], posts: dict[str, dict], **extra: Any) -> dict[str, Any]:
    return {
        "order": [r["id"] for r in order],
        "posts": posts,
        "next_post_id": "",
        "prev_post_id": "",
        "has_next": False,
    } | extra


async def _attach_files(ctx: Ctx, file_ids: list, channel_id: str, post_id: str) -> list[str]:
    if not isinstance(file_ids, list) or len(file_ids) > MAX_FILES:
        raise bad_param("file_ids")
    for file_id in file_ids:
        ok = await ctx.tx.run(
            "UPDATE files SET post_id = %s WHERE id = %s AND creator_id = %s AND channel_id = %s "
            "AND post_id = ''",
            post_id,
            str(file_id),
            ctx.me["id"],
            channel_id,
        )
        if not ok:
            raise ApiError(
                400,
                "app.file_info.attach.app_error",
                "Unable to attach the file to the post.",
                f"file {file_id} is unknown, not yours, from another channel or already attached",
            )
    return [str(f) for f in file_ids]


async def create_post(ctx: Ctx) -> tuple[int, Any]:
    body = await ctx.json()
    channel_id, message = require_str(body, "channel_id"), body.get("message", "")
    channel = await ctx.tx.one("SELECT * FROM channels WHERE id = %s AND delete_at = 0", channel_id)
    if channel is None or not (
        ctx.is_admin or await perms.is_channel_member(ctx.tx, channel_id, ctx.me["id"])
    ):
        raise forbidden("create_post")
    file_ids = body.get("file_ids") or []
    if not isinstance(message, str) or len(message) > MAX_MESSAGE or not (message.strip() or file_ids):
        raise ApiError(
            400, "model.post.is_valid.msg.app_error", "Invalid message: it must be 1 to 16383 characters."
        )
    root_id = str(body.get("root_id") or "")
    if root_id:
        root = await ctx.tx.one("SELECT * FROM posts WHERE id = %s AND delete_at = 0", root_id)
        if root is None or root["channel_id"] != channel_id or root["root_id"]:
            raise ApiError(400, "api.post.create_post.root_id.app_error", "Invalid RootId parameter.")
    # Mattermost honours a client-supplied create_at only for system admins (imports, loading).
    create_at = body.get("create_at") if ctx.is_admin and isinstance(body.get("create_at"), int) else 0
    create_at = create_at if create_at and create_at > 0 else ids.now_ms()
    post_id = ids.new_id()
    props = body.get("props") if isinstance(body.get("props"), dict) else {}
    await ctx.tx.run(
        "INSERT INTO posts (id, channel_id, user_id, root_id, message, props, create_at, update_at) "
        "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
        post_id,
        channel_id,
        ctx.me["id"],
        root_id,
        message,
        jsonb(props),
        create_at,
        create_at,
    )
    attached = await _attach_files(ctx, file_ids, channel_id, post_id)
    await ctx.tx.run("UPDATE posts SET file_ids = %s WHERE id = %s", jsonb(attached), post_id)
    await ctx.tx.run(
        "UPDATE channels SET last_post_at = GREATEST(last_post_at, %s), total_msg_count = total_msg_count + 1, "
        "last_root_post_at = CASE WHEN %s = '' THEN GREATEST(last_root_post_at, %s) ELSE last_root_post_at END, "
        "total_msg_count_root = total_msg_count_root + CASE WHEN %s = '' THEN 1 ELSE 0 END WHERE id = %s",
        create_at,
        root_id,
        create_at,
        root_id,
        channel_id,
    )
    await ctx.tx.run(
        "UPDATE channel_members SET msg_count = msg_count + 1, last_viewed_at = %s, last_update_at = %s "
        "WHERE channel_id = %s AND user_id = %s",
        create_at,
        ids.now_ms(),
        channel_id,
        ctx.me["id"],
    )
    row = await perms.get_post(ctx.tx, post_id)
    created = (await render(ctx.tx, [row]))[post_id]
    data = {
        "channel_display_name": channel["display_name"],
        "channel_name": channel["name"],
        "channel_type": channel["type"],
        "post": json.dumps(created),
        "sender_name": "@" + ctx.me["username"],
        "set_online": True,
        "team_id": channel["team_id"],
    }
    ctx.events.append(await events.to_channel(ctx.tx, "posted", data, channel_id))
    return 201, created


async def _readable_post(ctx: Ctx, post_id: str) -> Row:
    post = await perms.get_post(ctx.tx, post_id)
    await perms.require_read(ctx, await perms.get_channel(ctx.tx, post["channel_id"]))
    return post


async def get_post(ctx: Ctx) -> tuple[int, Any]:
    post = await _readable_post(ctx, ctx.path("post_id"))
    return 200, (await render(ctx.tx, [post]))[post["id"]]


async def get_thread(ctx: Ctx) -> tuple[int, Any]:
    """The root and its replies; with perPage, the root and one page of replies next to fromPost
    (direction=down: the newer ones, oldest first; up, the default: the older ones, newest first)."""
    post = await _readable_post(ctx, ctx.path("post_id"))
    root_id = post["root_id"] or post["id"]
    per_page = ctx.query_int("perPage", 0)
    if per_page <= 0:
        rows = await ctx.tx.all(
            "SELECT * FROM posts WHERE (id = %s OR root_id = %s) AND delete_at = 0 "
            "ORDER BY create_at DESC, id DESC",
            root_id,
            root_id,
        )
        return 200, post_list(rows, await render(ctx.tx, rows))
    per_page, down = min(per_page, MAX_PER_PAGE), ctx.query("direction") == "down"
    where, args = ["root_id = %s", "delete_at = 0"], [root_id]
    if from_post := ctx.query("fromPost"):
        if not ids.is_id(from_post):
            raise bad_param("fromPost", "url")
        where.append(f"(create_at, id) {'>' if down else '<'} (%s, %s)")
        args += [ctx.query_int("fromCreateAt", 0), from_post]
    order = "ASC" if down else "DESC"
    replies = await ctx.tx.all(
        f"SELECT * FROM posts WHERE {' AND '.join(where)} ORDER BY create_at {order}, id {order} LIMIT %s",
        *args,
        per_page + 1,
    )
    more, replies = len(replies) > per_page, replies[:per_page]
    rows = [await perms.get_post(ctx.tx, root_id), *replies]
    return 200, post_list(rows, await render(ctx.tx, rows), has_next=more)


async def _cursor(ctx: Ctx, name: str, channel_id: str) -> Row | None:
    value = ctx.query(name)
    if not value:
        return None
    row = await ctx.tx.one(
        "SELECT create_at, id FROM posts WHERE id = %s AND channel_id = %s", value, channel_id
    )
    if row is None:
        raise bad_param(name, "url")
    return row


async def channel_posts(ctx: Ctx) -> tuple[int, Any]:
    """A page of the channel's posts, newest first. `collapsedThreads=true` lists root posts only."""
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    limit, offset = ctx.paging()
    where, args = ["channel_id = %s", "delete_at = 0"], [channel["id"]]
    if ctx.query_bool("collapsedThreads"):
        where.append("root_id = ''")
    if since := ctx.query_int("since", 0):
        where.append("update_at > %s")
        args.append(since)
    before, after = await _cursor(ctx, "before", channel["id"]), await _cursor(ctx, "after", channel["id"])
    if before:
        where.append("(create_at, id) < (%s, %s)")
        args += [before["create_at"], before["id"]]
    if after:
        where.append("(create_at, id) > (%s, %s)")
        args += [after["create_at"], after["id"]]
    # `after` pages towards newer posts: take the oldest ones after the cursor, then flip to newest first.
    direction = "ASC" if after else "DESC"
    sql = f"SELECT * FROM posts WHERE {' AND '.join(where)} ORDER BY create_at {direction}, id {direction}"
    rows = await ctx.tx.all(sql + " LIMIT %s OFFSET %s", *args, limit + 1, offset)
    more, rows = len(rows) > limit, rows[:limit]
    if after:
        rows.reverse()
    missing_roots = {r["root_id"] for r in rows if r["root_id"]} - {r["id"] for r in rows}
    roots = (
        await ctx.tx.all("SELECT * FROM posts WHERE id = ANY(%s)", list(missing_roots))
        if missing_roots
        else []
    )
    posts = await render(ctx.tx, rows + roots)
    prev_id = rows[-1]["id"] if more and rows else ""
    return 200, post_list(rows, posts, prev_post_id=prev_id, has_next=more)


async def posts_around_unread(ctx: Ctx) -> tuple[int, Any]:
    """The posts around the user's last view of the channel: up to `limit_before` already seen (newest
    first) and `limit_after` not yet seen, with the ids of the posts just outside the window."""
    user_id = ctx.path("user_id")
    perms.require_self_or_admin(ctx, user_id)
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    member = await ctx.tx.one(
        "SELECT last_viewed_at FROM channel_members WHERE channel_id = %s AND user_id = %s",
        channel["id"],
        user_id,
    )
    seen = member["last_viewed_at"] if member else 0
    before_n, after_n = ctx.query_int("limit_before", 60), ctx.query_int("limit_after", 60)
    if before_n < 0 or after_n < 1:
        raise bad_param("limit_before" if before_n < 0 else "limit_after", "url")
    before_n, after_n = min(before_n, MAX_AROUND), min(after_n, MAX_AROUND)  # larger ones are capped
    live = "channel_id = %s AND delete_at = 0"
    older = await ctx.tx.all(
        f"SELECT * FROM posts WHERE {live} AND create_at <= %s ORDER BY create_at DESC, id DESC LIMIT %s",
        channel["id"],
        seen,
        before_n + 1,
    )
    newer = await ctx.tx.all(
        f"SELECT * FROM posts WHERE {live} AND create_at > %s ORDER BY create_at, id LIMIT %s",
        channel["id"],
        seen,
        after_n + 1,
    )
    prev_id = older[before_n]["id"] if len(older) > before_n else ""
    next_id = newer[after_n]["id"] if len(newer) > after_n else ""
    rows = list(reversed(newer[:after_n])) + older[:before_n]
    posts = await render(ctx.tx, rows)
    return 200, post_list(rows, posts, next_post_id=next_id, prev_post_id=prev_id, has_next=bool(next_id))


async def search_posts(ctx: Ctx) -> tuple[int, Any]:
    team = await perms.get_team(ctx.tx, ctx.path("team_id"))
    await perms.require_team_member(ctx, team["id"])
    return await _search(ctx, team["id"])


async def search_all_teams(ctx: Ctx) -> tuple[int, Any]:
    """POST /posts/search: the same search over every team the caller is in."""
    return await _search(ctx, None)


async def _search(ctx: Ctx, team_id: str | None) -> tuple[int, Any]:
    body = await ctx.json()
    terms = require_str(body, "terms", optional=True)
    query = search.parse(terms)
    if not (query.words or query.phrases or query.modifiers):
        return 200, {"order": [], "posts": {}, "matches": {}}
    offset_s = body_int(body, "time_zone_offset", 0)
    cond, args = search.where(query, or_search=bool(body.get("is_or_search")), tz_offset_s=offset_s)
    per_page = min(200, max(1, body_int(body, "per_page", 60)))
    page = max(0, body_int(body, "page", 0))
    rows = await ctx.tx.all(
        "SELECT p.* FROM posts p JOIN channels c ON c.id = p.channel_id JOIN users u ON u.id = p.user_id "
        "JOIN channel_members m ON m.channel_id = c.id AND m.user_id = %s "
        f"WHERE p.delete_at = 0 AND c.delete_at = 0 AND (%s::text IS NULL OR c.team_id = %s OR c.team_id = '') "
        f"AND {cond} ORDER BY p.create_at DESC, p.id DESC LIMIT %s OFFSET %s",
        ctx.me["id"],
        team_id,
        team_id,
        *args,
        per_page,
        page * per_page,
    )
    return 200, {
        "order": [r["id"] for r in rows],
        "posts": await render(ctx.tx, rows),
        "matches": {},
        "next_post_id": "",
        "prev_post_id": "",
        "has_next": len(rows) == per_page,
    }


async def post_files(ctx: Ctx) -> tuple[int, Any]:
    post = await _readable_post(ctx, ctx.path("post_id"))
    rows = await ctx.tx.all(
        f"SELECT {FILE_COLUMNS} FROM files WHERE post_id = %s AND delete_at = 0 ORDER BY create_at",
        post["id"],
    )
    return 200, [views.file_info(r) for r in rows]


async def save_reaction(ctx: Ctx) -> tuple[int, Any]:
    body = await ctx.json()
    user_id, post_id = require_str(body, "user_id"), require_str(body, "post_id")
    emoji = require_str(body, "emoji_name").strip(":").lower()
    if not EMOJI_RE.match(emoji):
        raise ApiError(
            400, "model.reaction.is_valid.emoji_name.app_error", "Invalid emoji name.", f"emoji={emoji}"
        )
    if user_id != ctx.me["id"]:
        raise ApiError(
            403,
            "api.reaction.save_reaction.user_id.app_error",
            "You cannot save reaction for the other user.",
        )
    post = await perms.get_post(ctx.tx, post_id)
    await perms.require_member(ctx, await perms.get_channel(ctx.tx, post["channel_id"]), "add_reaction")
    await ctx.tx.run(
        "INSERT INTO reactions (post_id, user_id, emoji_name, create_at) VALUES (%s,%s,%s,%s) "
        "ON CONFLICT DO NOTHING",
        post_id,
        user_id,
        emoji,
        ids.now_ms(),
    )
    await ctx.tx.run("UPDATE posts SET update_at = %s WHERE id = %s", ids.now_ms(), post_id)
    row = await ctx.tx.one(
        "SELECT r.*, p.channel_id FROM reactions r JOIN posts p ON p.id = r.post_id "
        "WHERE r.post_id = %s AND r.user_id = %s AND r.emoji_name = %s",
        post_id,
        user_id,
        emoji,
    )
    return 201, views.reaction(row)


async def delete_reaction(ctx: Ctx) -> tuple[int, Any]:
    user_id, post_id = ctx.path("user_id"), ctx.path("post_id")
    emoji = ctx.request.path_params["emoji_name"].strip(":").lower()
    if not EMOJI_RE.match(emoji):
        raise bad_param("emoji_name", "url")
    if user_id != ctx.me["id"] and not ctx.is_admin:
        raise forbidden("remove_others_reactions")
    post = await perms.get_post(ctx.tx, post_id)
    await perms.require_member(ctx, await perms.get_channel(ctx.tx, post["channel_id"]), "remove_reaction")
    removed = await ctx.tx.run(
        "DELETE FROM reactions WHERE post_id = %s AND user_id = %s AND emoji_name = %s",
        post_id,
        user_id,
        emoji,
    )
    if removed:
        await ctx.tx.run("UPDATE posts SET update_at = %s WHERE id = %s", ids.now_ms(), post_id)
    return 200, {"status": "OK"}


async def posts_by_ids(ctx: Ctx) -> tuple[int, Any]:
    """The posts among `ids` that the caller may read (unknown ids are left out)."""
    wanted = await ctx.json(list)
    if not wanted or not all(isinstance(i, str) and ids.is_id(i) for i in wanted):
        raise bad_param("post_ids")
    rows = await ctx.tx.all(
        "SELECT * FROM posts WHERE id = ANY(%s) AND delete_at = 0 ORDER BY create_at, id", wanted
    )
    readable = []
    for row in rows:
        if await perms.can_read_channel(ctx, await perms.get_channel(ctx.tx, row["channel_id"])):
            readable.append(row)
    posts = await render(ctx.tx, readable)
    return 200, [posts[r["id"]] for r in readable]


async def post_reactions(ctx: Ctx) -> tuple[int, Any]:
    post = await _readable_post(ctx, ctx.path("post_id"))
    rows = await ctx.tx.all(
        "SELECT r.*, p.channel_id FROM reactions r JOIN posts p ON p.id = r.post_id "
        "WHERE r.post_id = %s ORDER BY r.create_at",
        post["id"],
    )
    return 200, [views.reaction(r) for r in rows]


ROUTES = [
    Route("/api/v4/posts", endpoint(create_post), methods=["POST"]),
    Route("/api/v4/posts/ids", endpoint(posts_by_ids), methods=["POST"]),
    Route("/api/v4/posts/search", endpoint(search_all_teams), methods=["POST"]),
    Route("/api/v4/posts/{post_id}", endpoint(get_post), methods=["GET"]),
    Route("/api/v4/posts/{post_id}/thread", endpoint(get_thread), methods=["GET"]),
    Route("/api/v4/posts/{post_id}/files/info", endpoint(post_files), methods=["GET"]),
    Route("/api/v4/posts/{post_id}/reactions", endpoint(post_reactions), methods=["GET"]),
    Route("/api/v4/channels/{channel_id}/posts", endpoint(channel_posts), methods=["GET"]),
    Route(
        "/api/v4/users/{user_id}/channels/{channel_id}/posts/unread",
        endpoint(posts_around_unread),
        methods=["GET"],
    ),
    Route("/api/v4/teams/{team_id}/posts/search", endpoint(search_posts), methods=["POST"]),
    Route("/api/v4/reactions", endpoint(save_reaction), methods=["POST"]),
    Route(
        "/api/v4/users/{user_id}/posts/{post_id}/reactions/{emoji_name}",
        endpoint(delete_reaction),
        methods=["DELETE"],
    ),
]
