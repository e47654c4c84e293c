"""Changing posts after the fact: edit (PUT and patch), delete, pin / unpin, and the pinned list.

Mattermost's default permissions: authors edit and delete their own posts in channels they
belong to; other people's posts only system admins (edit_others_posts, delete_others_posts);
anyone who can read a channel may pin or unpin in it.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.routing import Route

from mcp_wrappers.mattermost_compat import events, ids, perms
from mcp_wrappers.mattermost_compat.api_posts import MAX_MESSAGE, post_list, render
from mcp_wrappers.mattermost_compat.db import Row, jsonb
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint


async def _own_post(ctx: Ctx, post_id: str, others_permission: str) -> Row:
    post = await perms.get_post(ctx.tx, post_id)
    channel = await perms.get_channel(ctx.tx, post["channel_id"])
    if post["user_id"] != ctx.me["id"]:
        if not ctx.is_admin:
            raise forbidden(others_permission)
    else:
        await perms.require_member(ctx, channel, others_permission.replace("_others", ""))
    return post


async def _apply(ctx: Ctx, post: Row, body: dict) -> tuple[int, Any]:
    message, props = body.get("message"), body.get("props")
    if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE):
        raise ApiError(
            400,
            "model.post.is_valid.message_length.app_error",
            "Post Message property is longer than the maximum permitted length.",
        )
    if props is not None and not isinstance(props, dict):
        raise bad_param("props")
    now = ids.now_ms()
    edited = message is not None and message != post["message"]
    await ctx.tx.run(
        "UPDATE posts SET message = %s, props = %s, is_pinned = %s, update_at = %s, edit_at = %s WHERE id = %s",
        post["message"] if message is None else message,
        jsonb(post["props"] if props is None else props),
        bool(body["is_pinned"]) if isinstance(body.get("is_pinned"), bool) else post["is_pinned"],
        now,
        now if edited else post["edit_at"],
        post["id"],
    )
    row = await perms.get_post(ctx.tx, post["id"])
    edited_post = (await render(ctx.tx, [row]))[row["id"]]
    data = {"post": json.dumps(edited_post)}
    ctx.events.append(await events.to_channel(ctx.tx, "post_edited", data, row["channel_id"]))
    return 200, edited_post


async def update_post(ctx: Ctx) -> tuple[int, Any]:
    """PUT: the body is the post; its `id` must be the URL's."""
    post_id = ctx.path("post_id")
    body = await ctx.json()
    if body.get("id") != post_id:
        raise ApiError(
            400, "api.context.invalid_body_param.app_error", "Invalid or missing id in request body."
        )
    return await _apply(ctx, await _own_post(ctx, post_id, "edit_others_posts"), body)


async def patch_post(ctx: Ctx) -> tuple[int, Any]:
    post_id = ctx.path("post_id")
    body = await ctx.json()
    return await _apply(ctx, await _own_post(ctx, post_id, "edit_others_posts"), body)


async def delete_post(ctx: Ctx) -> tuple[int, Any]:
    """Deleting a thread's root deletes its replies too, as Mattermost does."""
    post = await _own_post(ctx, ctx.path("post_id"), "delete_others_posts")
    data = {"post": json.dumps((await render(ctx.tx, [post]))[post["id"]])}
    ctx.events.append(await events.to_channel(ctx.tx, "post_deleted", data, post["channel_id"]))
    now = ids.now_ms()
    await ctx.tx.run(
        "UPDATE posts SET delete_at = %s, update_at = %s WHERE (id = %s OR root_id = %s) AND delete_at = 0",
        now,
        now,
        post["id"],
        post["id"],
    )
    return 200, {"status": "OK"}


async def _set_pinned(ctx: Ctx, pinned: bool) -> tuple[int, Any]:
    post = await perms.get_post(ctx.tx, ctx.path("post_id"))
    await perms.require_read(ctx, await perms.get_channel(ctx.tx, post["channel_id"]))
    await ctx.tx.run(
        "UPDATE posts SET is_pinned = %s, update_at = %s WHERE id = %s", pinned, ids.now_ms(), post["id"]
    )
    return 200, {"status": "OK"}


async def pin_post(ctx: Ctx) -> tuple[int, Any]:
    return await _set_pinned(ctx, True)


async def unpin_post(ctx: Ctx) -> tuple[int, Any]:
    return await _set_pinned(ctx, False)


async def pinned_posts(ctx: Ctx) -> tuple[int, Any]:
    channel = await perms.get_channel(ctx.tx, ctx.path("channel_id"))
    await perms.require_read(ctx, channel)
    rows = await ctx.tx.all(
        "SELECT * FROM posts WHERE channel_id = %s AND is_pinned AND delete_at = 0 ORDER BY create_at DESC, id DESC",
        channel["id"],
    )
    return 200, post_list(rows, await render(ctx.tx, rows))


ROUTES = [
    Route("/api/v4/posts/{post_id}", endpoint(update_post), methods=["PUT"]),
    Route("/api/v4/posts/{post_id}", endpoint(delete_post), methods=["DELETE"]),
    Route("/api/v4/posts/{post_id}/patch", endpoint(patch_post), methods=["PUT"]),
    Route("/api/v4/posts/{post_id}/pin", endpoint(pin_post), methods=["POST"]),
    Route("/api/v4/posts/{post_id}/unpin", endpoint(unpin_post), methods=["POST"]),
    Route("/api/v4/channels/{channel_id}/pinned", endpoint(pinned_posts), methods=["GET"]),
]
