"""Database rows rendered as Mattermost API v4 JSON objects (field names and types as upstream)."""

from __future__ import annotations

from typing import Any

from mcp_wrappers.mattermost_compat.db import Row

USER_NOTIFY = {
    "channel": "true",
    "comments": "never",
    "desktop": "mention",
    "desktop_sound": "true",
    "email": "true",
    "first_name": "false",
    "mention_keys": "",
    "push": "mention",
}
CHANNEL_NOTIFY = {
    "desktop": "default",
    "email": "default",
    "mark_unread": "all",
    "push": "default",
    "ignore_channel_mentions": "default",
}


def user(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "create_at": row["create_at"],
        "update_at": row["update_at"],
        "delete_at": row["delete_at"],
        "username": row["username"],
        "auth_data": "",
        "auth_service": "",
        "email": row["email"],
        "email_verified": True,
        "nickname": row["nickname"],
        "first_name": row["first_name"],
        "last_name": row["last_name"],
        "position": row["position"],
        "roles": row["roles"],
        "notify_props": USER_NOTIFY,
        "last_password_update": row["create_at"],
        "locale": "en",
        "disable_welcome_email": False,
    }


def team(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "create_at": row["create_at"],
        "update_at": row["update_at"],
        "delete_at": row["delete_at"],
        "display_name": row["display_name"],
        "name": row["name"],
        "description": row["description"],
        "email": row["email"],
        "type": row["type"],
        "company_name": "",
        "allowed_domains": "",
        "invite_id": row["invite_id"],
        "allow_open_invite": row["type"] == "O",
        "scheme_id": "",
    }


def team_member(row: Row) -> dict[str, Any]:
    return {
        "team_id": row["team_id"],
        "user_id": row["user_id"],
        "roles": row["roles"],
        "delete_at": row["delete_at"],
        "scheme_guest": False,
        "scheme_user": True,
        "scheme_admin": "team_admin" in row["roles"],
        "explicit_roles": "",
    }


def channel(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "create_at": row["create_at"],
        "update_at": row["update_at"],
        "delete_at": row["delete_at"],
        "team_id": row["team_id"],
        "type": row["type"],
        "display_name": row["display_name"],
        "name": row["name"],
        "header": row["header"],
        "purpose": row["purpose"],
        "last_post_at": row["last_post_at"],
        "last_root_post_at": row["last_root_post_at"],
        "total_msg_count": row["total_msg_count"],
        "total_msg_count_root": row["total_msg_count_root"],
        "extra_update_at": 0,
        "creator_id": row["creator_id"],
        "scheme_id": "",
    }


def channel_member(row: Row) -> dict[str, Any]:
    return {
        "channel_id": row["channel_id"],
        "user_id": row["user_id"],
        "roles": row["roles"],
        "last_viewed_at": row["last_viewed_at"],
        "msg_count": row["msg_count"],
        "mention_count": 0,
        "mention_count_root": 0,
        "msg_count_root": 0,
        "notify_props": CHANNEL_NOTIFY,
        "last_update_at": row["last_update_at"],
        "scheme_guest": False,
        "scheme_user": True,
        "scheme_admin": "channel_admin" in row["roles"],
        "explicit_roles": "",
    }


def reaction(row: Row) -> dict[str, Any]:
    return {
        "user_id": row["user_id"],
        "post_id": row["post_id"],
        "emoji_name": row["emoji_name"],
        "create_at": row["create_at"],
        "update_at": row["create_at"],
        "delete_at": 0,
        "remote_id": "",
        "channel_id": row.get("channel_id", ""),
    }


# images Mattermost makes a thumbnail and a preview of (ours serves the image itself: no image library here)
PREVIEWABLE = frozenset({"image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp", "image/tiff"})


def file_info(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "user_id": row["creator_id"],
        "post_id": row["post_id"],
        "channel_id": row["channel_id"],
        "create_at": row["create_at"],
        "update_at": row["update_at"],
        "delete_at": row["delete_at"],
        "name": row["name"],
        "extension": row["extension"],
        "size": row["size"],
        "mime_type": row["mime_type"],
        "width": 0,
        "height": 0,
        "has_preview_image": row["mime_type"] in PREVIEWABLE,
    }


def post(row: Row, reactions: list[Row] = (), files: list[Row] = (), reply_count: int = 0) -> dict[str, Any]:
    """`reactions`/`files` go into `metadata` as Mattermost does (omitted when empty)."""
    metadata: dict[str, Any] = {}
    if reactions:
        metadata["reactions"] = [reaction(r) for r in reactions]
    if files:
        metadata["files"] = [file_info(f) for f in files]
    return {
        "id": row["id"],
        "create_at": row["create_at"],
        "update_at": row["update_at"],
        "edit_at": row["edit_at"],
        "delete_at": row["delete_at"],
        "is_pinned": row.get("is_pinned", False),
        "user_id": row["user_id"],
        "channel_id": row["channel_id"],
        "root_id": row["root_id"],
        "original_id": "",
        "message": row["message"],
        "type": row["type"],
        "props": row["props"],
        "hashtags": "",
        "file_ids": row["file_ids"],
        "pending_post_id": "",
        "reply_count": reply_count,
        "last_reply_at": 0,
        "has_reactions": bool(reactions),
        "metadata": metadata,
    }
