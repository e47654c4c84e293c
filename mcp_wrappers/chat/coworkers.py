"""The chat side of simulated coworkers: `python3 -m mcp_wrappers.chat.coworkers inbox|post ...`.

Run by the host's coworker session (gym/harness/coworkers.py) as OS user `grader`, with the
admin token from /egym/secrets/chat-admin-token. What a coworker says is decided on the host,
from rules the sandbox never holds; this module only reads what was said to them and posts
their replies as themselves, through API v4 alone, so it works on both chat servers.

    inbox --people dana.lee,raj.patel --since MS
        prints one JSON list: every post after MS (epoch ms) not written by those people, in a
        direct or group channel one of them belongs to, or naming with @ one of them who is in
        the channel (a mention of someone outside a channel reaches no one, as in Mattermost):
        [{"id", "channel_id", "channel", "root_id", "user", "message", "create_at", "to": [usernames]}]
    post --as dana.lee --channel ID [--root ID] --message TEXT
        posts as that person (a personal access token created and revoked around the post),
        prints {"id", "create_at"}
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from mcp_wrappers.chat.client import ADMIN_TOKEN_FILE, DEFAULT_URL, ApiError, MattermostClient

PER_PAGE = 200


def _mentioned(message: str, people: list[str]) -> list[str]:
    return [p for p in people if re.search(rf"@{re.escape(p)}(?![\w.-])", message, re.IGNORECASE)]


def inbox(client: MattermostClient, people: list[str], since: int) -> list[dict[str, Any]]:
    users = {u.id: u for u in client.users()}
    ids = {u.username: u.id for u in users.values()}
    unknown = [p for p in people if p not in ids]
    if unknown:
        raise ApiError(404, "coworkers.unknown", f"no chat user {', '.join(unknown)}")
    channels = {c.id: c for c in client.all_channels()}
    for person in people:
        channels.update((c.id, c) for c in client.user_channels(ids[person]))
    found = []
    # Only channels with a post after `since` (their last_post_at says so, on both chat servers): a
    # look after each call reads one or two channels, not every channel of the company.
    for channel in (c for c in channels.values() if c.last_post_at > since):
        batch = client.get(f"/channels/{channel.id}/posts", since=since, per_page=PER_PAGE)
        if not batch.get("order"):
            continue
        # Who is in the channel: a mention of someone outside it reaches no one (as in Mattermost).
        members = [
            users[m.user_id].username for m in client.channel_members(channel.id) if m.user_id in users
        ]
        direct = channel.type in ("D", "G")
        for post_id in batch.get("order", []):
            post = batch["posts"][post_id]
            author = users[post["user_id"]].username if post["user_id"] in users else post["user_id"]
            if post["create_at"] <= since or author in people or post.get("type", "").startswith("system_"):
                continue
            named = set(_mentioned(post["message"], people))
            to = sorted(p for p in people if p in members and (direct or p in named))
            if not to:
                continue
            found.append(
                {
                    "id": post["id"],
                    "channel_id": channel.id,
                    "channel": "dm:" + ",".join(sorted(members)) if direct else channel.name,
                    "root_id": post.get("root_id") or "",
                    "user": author,
                    "message": post["message"],
                    "create_at": post["create_at"],
                    "to": to,
                }
            )
    return sorted(found, key=lambda p: (p["create_at"], p["id"]))


def post_as(admin: MattermostClient, username: str, channel_id: str, message: str, root_id: str) -> dict:
    user = admin.user_by_username(username)
    token = admin.create_token(user.id, "egym: a coworker's reply (revoked after it)")
    try:
        post = admin.with_token(token.token).create_post(channel_id, message, root_id=root_id)
    finally:
        admin.revoke_token(token.id)
    return {"id": post.id, "create_at": post.create_at}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcp_wrappers.chat.coworkers")
    commands = parser.add_subparsers(dest="command", required=True)
    read = commands.add_parser("inbox")
    read.add_argument("--people", required=True, help="usernames, comma-separated")
    read.add_argument("--since", type=int, required=True, help="epoch milliseconds")
    write = commands.add_parser("post")
    write.add_argument("--as", dest="author", required=True)
    write.add_argument("--channel", required=True)
    write.add_argument("--root", default="")
    write.add_argument("--message", required=True)
    args = parser.parse_args(argv)
    try:
        token = os.environ.get("MATTERMOST_TOKEN") or ADMIN_TOKEN_FILE.read_text().strip()
    except OSError as exc:
        print(f"coworkers: no admin token ({exc}); was a chat file loaded?", file=sys.stderr)
        return 1
    client = MattermostClient(os.environ.get("MATTERMOST_URL", DEFAULT_URL), token)
    try:
        if args.command == "inbox":
            result: Any = inbox(client, [p for p in args.people.split(",") if p], args.since)
        else:
            result = post_as(client, args.author, args.channel, args.message, args.root)
    except ApiError as exc:
        print(f"coworkers: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
