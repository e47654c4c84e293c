"""Posts, channels and users as compact text for a model."""

from __future__ import annotations

import datetime as dt

from mcp_wrappers.chat.client import Channel, Post, User
from mcp_wrappers.chat.session import ChatSession


def when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def post(session: ChatSession, item: Post, *, thread_hint: bool = True, where: str = "") -> str:
    lines = [
        f"- [{when(item.create_at)}] {where}@{session.username(item.user_id)}: "
        + item.message.replace("\n", "\n    ")
    ]
    details = [f"post_id={item.id}"]
    if item.root_id and thread_hint:
        details.append(f"reply in thread {item.root_id}")
    if item.reactions:
        by_emoji: dict[str, list[str]] = {}
        for reaction in item.reactions:
            by_emoji.setdefault(reaction.emoji_name, []).append("@" + session.username(reaction.user_id))
        details.append("reactions: " + ", ".join(f":{e}: {' '.join(u)}" for e, u in by_emoji.items()))
    if item.files:
        details.append("files: " + ", ".join(f.name for f in item.files))
    if thread_hint and not item.root_id and item.reply_count:
        details.append(
            f"thread: {item.reply_count} repl{'y' if item.reply_count == 1 else 'ies'} "
            f"(read_thread post_id={item.id})"
        )
    lines.append("    (" + " | ".join(details) + ")")
    return "\n".join(lines)


def channel(session: ChatSession, item: Channel, member: bool) -> str:
    kind = {"O": "public", "P": "private", "D": "direct message", "G": "group message"}[item.type]
    text = f"- {session.label(item)} ({kind}"
    if item.type in ("O", "P") and item.display_name:
        text += f', "{item.display_name}"'
    text += ", member" if member else ", not a member: add_channel_member to join"
    text += ")"
    if item.purpose:
        text += f" — {item.purpose}"
    return text


def user(item: User) -> str:
    text = f"- @{item.username}"
    if item.full_name:
        text += f" — {item.full_name}"
    if item.position:
        text += f", {item.position}"
    return text + (" (deactivated)" if item.delete_at else "")


def profile(item: User) -> str:
    rows = [
        ("username", "@" + item.username),
        ("name", item.full_name),
        ("nickname", item.nickname),
        ("position", item.position),
        ("email", item.email),
        ("user_id", item.id),
    ]
    return "\n".join(f"{k}: {v}" for k, v in rows if v) + ("\nstatus: deactivated" if item.delete_at else "")
