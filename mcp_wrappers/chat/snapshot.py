"""Print the whole chat state as ONE JSON document (for the grader): `python3 -m mcp_wrappers.chat.snapshot`.

Run by the grader as OS user `grader`: it reads everything through the API with the
admin token from /egym/secrets/chat-admin-token (override: MATTERMOST_TOKEN,
MATTERMOST_URL). Output shape (lists sorted as noted; the grader relies on it):

    {
      "users":    [{"id", "username", "first_name", "last_name", "email", "position"}],      # by username
      "channels": [{"id", "name", "display_name", "type", "header", "purpose",
                    "members": [usernames, sorted]}],                                          # by name
      "posts":    [{"id", "channel", "user", "message", "root_id", "create_at",
                    "reactions": [{"user", "emoji"}], "files": [file names]}]                  # by create_at, id
    }

- `type` is Mattermost's: "O" public, "P" private, "D" direct, "G" group message.
- `name`/`channel` of a direct or group message is "dm:" + the members' usernames, sorted and
  comma-separated (e.g. "dm:dana.lee,raj.patel"); other channels use their handle ("finance").
- `root_id` is "" for a top-level post, else the id of the thread's first post.
- `create_at` is epoch milliseconds. Deleted posts and deleted channels are left out, and so are
  system posts (`type` starting with `system_`: joins, adds, ...).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcp_wrappers.chat.client import ADMIN_TOKEN_FILE, DEFAULT_URL, ApiError, Channel, MattermostClient

# Real Mattermost writes a post for every join, add, leave, header change... (`system_join_channel`,
# `system_add_to_channel`, ...); the compatible service writes none. They are the server's, not
# anyone's message, so the snapshot leaves them out and both servers give the grader the same state.
SYSTEM_POST_PREFIX = "system_"


def _channels(client: MattermostClient, user_ids: list[str]) -> list[Channel]:
    """Every channel: public/private from the admin listing, DMs and groups from each user's memberships."""
    found = {c.id: c for c in client.all_channels()}
    for user_id in user_ids:
        found.update((c.id, c) for c in client.user_channels(user_id) if c.id not in found)
    return list(found.values())


def snapshot(client: MattermostClient) -> dict[str, Any]:
    users = client.users()
    names = {u.id: u.username for u in users}
    channels_out, posts_out = [], []
    for channel in _channels(client, list(names)):
        members = sorted(names.get(m.user_id, m.user_id) for m in client.channel_members(channel.id))
        label = "dm:" + ",".join(members) if channel.type in ("D", "G") else channel.name
        channels_out.append(
            {
                "id": channel.id,
                "name": label,
                "display_name": channel.display_name,
                "type": channel.type,
                "header": channel.header,
                "purpose": channel.purpose,
                "members": members,
            }
        )
        for post in client.all_channel_posts(channel.id):
            if post.type.startswith(SYSTEM_POST_PREFIX):
                continue
            files = post.files or (client.post_files(post.id) if post.file_ids else [])
            posts_out.append(
                {
                    "id": post.id,
                    "channel": label,
                    "user": names.get(post.user_id, post.user_id),
                    "message": post.message,
                    "root_id": post.root_id or "",
                    "create_at": post.create_at,
                    "reactions": [
                        {"user": names.get(r.user_id, r.user_id), "emoji": r.emoji_name}
                        for r in post.reactions
                    ],
                    "files": [f.name for f in files],
                }
            )
    return {
        "users": [
            {
                "id": u.id,
                "username": u.username,
                "first_name": u.first_name,
                "last_name": u.last_name,
                "email": u.email,
                "position": u.position,
            }
            for u in sorted(users, key=lambda u: u.username)
        ],
        "channels": sorted(channels_out, key=lambda c: (c["name"], c["id"])),
        "posts": sorted(posts_out, key=lambda p: (p["create_at"], p["id"])),
    }


def main() -> int:
    token = os.environ.get("MATTERMOST_TOKEN")
    try:
        token = token or ADMIN_TOKEN_FILE.read_text().strip()
    except OSError as exc:
        print(f"chat snapshot: no admin token ({exc}); was a chat file loaded?", file=sys.stderr)
        return 1
    client = MattermostClient(os.environ.get("MATTERMOST_URL", DEFAULT_URL), token)
    try:
        json.dump(snapshot(client), sys.stdout, ensure_ascii=False)
    except ApiError as exc:
        print(f"chat snapshot: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
