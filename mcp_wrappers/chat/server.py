"""The chat MCP server: Slack-like tools over the Mattermost API v4, acting as the agent's user.

Run: `python3 -m mcp_wrappers.chat` (stdio) as OS user `agent`. Configured by
MATTERMOST_URL (default http://127.0.0.1:8065) and MATTERMOST_TOKEN (default: the
token the chat loader wrote to ~/.config/egym/chat.env); MATTERMOST_TEAM picks the
team when the user is in several.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_wrappers.chat import render
from mcp_wrappers.chat.client import ApiError, MattermostClient
from mcp_wrappers.chat.session import ChatSession
from mcp_wrappers.toolkit import READ_ONLY, make_server, run_stdio, tool_errors, writes

log = logging.getLogger("egym.chat")
WORKSPACE = Path("/workspace")
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
INSTRUCTIONS = (
    "Company chat (Mattermost). Channels are named like #finance; '@username' means a direct "
    "message. Read before you write: read_channel, read_thread, search_messages."
)
_session: ChatSession | None = None


def session() -> ChatSession:
    global _session
    if _session is None:
        client = MattermostClient.for_agent()
        if not client.token:
            raise ToolError("no chat token: set MATTERMOST_TOKEN or load a chat file with agent_user")
        _session = ChatSession(client)
    return _session


def explain(exc: ApiError) -> str:
    if exc.status == 0:
        return f"the chat server is not reachable ({exc.message})"
    kinds = {401: "the chat token was rejected", 403: "permission denied", 404: "not found"}
    return f"{kinds.get(exc.status, f'chat server error {exc.status}')}: {exc.message}"


tool = tool_errors(ApiError, log, explain)  # API failures come back as tool errors the model can read


ChannelRef = Annotated[
    str, Field(description="Channel name like 'finance' or '#finance', or '@username' for a direct message.")
]
PostId = Annotated[
    str,
    Field(
        description="A post id as shown by read_channel / search_messages, e.g. 'k3x9q1...' (26 characters)."
    ),
]


@tool
def list_channels(
    query: Annotated[
        str, Field(description="Optional filter on name, display name or purpose, e.g. 'fin'.")
    ] = "",
) -> str:
    """List the chat channels you can see: your channels, your direct messages and public channels you could
    join. Example: list_channels(query="budget")."""
    s = session()
    mine = s.my_channel_ids()
    wanted = query.strip().lstrip("#~").lower()
    rows = [
        render.channel(s, c, c.id in mine)
        for c in s.visible_channels()
        if not wanted or wanted in f"{c.name} {c.display_name} {c.purpose}".lower() or wanted in s.label(c)
    ]
    return "\n".join(rows) if rows else f"No channel matches '{query}'."


@tool
def read_channel(
    channel: ChannelRef,
    limit: Annotated[int, Field(ge=1, le=100, description="Messages per page.")] = 20,
    page: Annotated[int, Field(ge=0, description="0 = newest page, 1 = the page before, ...")] = 0,
) -> str:
    """Read a channel's messages, newest first. Replies are folded into threads: a message with
    'thread: N replies' has a conversation you can open with read_thread. Example:
    read_channel(channel="finance", limit=10)."""
    s = session()
    target = s.find_channel(channel)
    posts = s.client.channel_posts(target.id, page=page, per_page=limit, collapsed=True)
    items = posts.ordered()
    if not items:
        return f"{s.label(target)}: no messages" + (" on this page." if page else ".")
    head = f"{s.label(target)}, page {page}, newest first ({len(items)} messages):"
    tail = f'\nOlder messages: read_channel(channel="{channel}", page={page + 1})' if posts.has_next else ""
    return head + "\n" + "\n".join(render.post(s, p) for p in items) + tail


@tool
def read_thread(post_id: PostId) -> str:
    """Read a whole thread (the first message and every reply, oldest first) from any message in it.
    Example: read_thread(post_id="k3x9q1...")."""
    s = session()
    thread = s.client.thread(post_id.strip())
    items = sorted(thread.ordered(), key=lambda p: (p.create_at, p.id))
    where = s.label(s.client.channel(items[0].channel_id)) if items else "?"
    return f"Thread in {where} ({len(items)} messages, oldest first):\n" + "\n".join(
        render.post(s, p, thread_hint=False) for p in items
    )


def _post(channel_ref: str, message: str, root_id: str = "", file_ids: list[str] | None = None) -> str:
    s = session()
    target = s.find_channel(channel_ref) if not root_id else s.client.channel(channel_ref)
    try:
        created = s.client.create_post(target.id, message, root_id=root_id, file_ids=file_ids)
    except ApiError as exc:
        if exc.status == 403 and target.type == "O":
            raise ToolError(
                f"{explain(exc)} You are not a member of {s.label(target)}; join first with "
                f'add_channel_member(channel="{target.name}", username="{s.me.username}").'
            ) from None
        raise
    where = f"thread {root_id} in {s.label(target)}" if root_id else s.label(target)
    return f"Posted to {where} (post_id={created.id})."


@tool
def post_message(channel: ChannelRef, message: Annotated[str, Field(description="Markdown text.")]) -> str:
    """Post a new message in a channel (not in a thread). Use reply_in_thread to answer a message and
    send_direct_message for a private note to one person. Example:
    post_message(channel="finance", message="Q1 accruals are booked.")."""
    if not message.strip():
        raise ToolError("message is empty")
    return _post(channel, message)


@tool
def reply_in_thread(post_id: PostId, message: Annotated[str, Field(description="Markdown text.")]) -> str:
    """Reply in the thread of a message (works with the first message or any reply of the thread).
    Example: reply_in_thread(post_id="k3x9q1...", message="Done, see the updated sheet.")."""
    if not message.strip():
        raise ToolError("message is empty")
    parent = session().client.get_post(post_id.strip())
    return _post(parent.channel_id, message, root_id=parent.root_id or parent.id)


@tool
def send_direct_message(
    username: Annotated[str, Field(description="Recipient, e.g. 'raj.patel'.")],
    message: Annotated[str, Field(description="Markdown text.")],
) -> str:
    """Send a direct (private) message to one person. Example:
    send_direct_message(username="raj.patel", message="Can you approve the PO?")."""
    if not message.strip():
        raise ToolError("message is empty")
    return _post("@" + username.strip().lstrip("@"), message)


@tool
def add_reaction(
    post_id: PostId,
    emoji: Annotated[str, Field(description="Emoji name, e.g. 'thumbsup', 'white_check_mark', 'eyes'.")],
) -> str:
    """React to a message with an emoji. Example: add_reaction(post_id="k3x9q1...", emoji="thumbsup")."""
    s = session()
    name = emoji.strip().strip(":")
    s.client.add_reaction(s.me.id, post_id.strip(), name)
    return f"Reacted :{name}: to post {post_id.strip()}."


@tool
def search_messages(
    query: Annotated[
        str,
        Field(
            description='Words to find; "quoted phrase" for exact text. '
            "Also accepts from:user, in:channel, after:/before:/on:"
            "YYYY-MM-DD."
        ),
    ],
    channel: Annotated[str, Field(description="Optional channel name to search in.")] = "",
    from_user: Annotated[str, Field(description="Optional author username.")] = "",
    limit: Annotated[int, Field(ge=1, le=100, description="Most messages to return.")] = 20,
) -> str:
    """Search messages in the channels you belong to, newest first. Example:
    search_messages(query="invoice overdue", channel="finance") or search_messages(query="after:2024-03-01 budget")."""
    s = session()
    terms, target = query.strip(), s.find_channel(channel) if channel.strip() else None
    if target is not None and target.type in ("O", "P"):
        terms += f" in:{target.name}"
    if from_user.strip():
        terms += f" from:{s.find_user(from_user).username}"
    found = s.client.search_posts(s.team.id, terms, per_page=limit if target is None else 200).ordered()
    if target is not None:  # direct and group messages have no in: name; filter here
        found = [p for p in found if p.channel_id == target.id][:limit]
    if not found:
        return f"No messages match '{terms}'."
    labels: dict[str, str] = {}
    for p in found:
        if p.channel_id not in labels:
            labels[p.channel_id] = s.label(s.client.channel(p.channel_id))
    return f"{len(found)} messages match '{terms}' (newest first):\n" + "\n".join(
        render.post(s, p, where=f"{labels[p.channel_id]} ") for p in found
    )


@tool
def get_user(
    username: Annotated[str, Field(description="Username like 'raj.patel' (or a full name).")],
) -> str:
    """Look up a person's profile: full name, position, email. Example: get_user(username="raj.patel")."""
    return render.profile(session().find_user(username))


@tool
def list_users(
    query: Annotated[str, Field(description="Optional filter on username, name or email.")] = "",
    channel: Annotated[str, Field(description="Optional: only members of this channel.")] = "",
) -> str:
    """List people in the workspace (or the members of one channel). Example: list_users(channel="finance")
    or list_users(query="lee")."""
    s = session()
    scope = {"in_channel": s.find_channel(channel).id} if channel.strip() else {"in_team": s.team.id}
    if query.strip():
        key = "in_channel_id" if channel.strip() else "team_id"
        users = s.client.search_users(query.strip(), **{key: next(iter(scope.values()))})
    else:
        users = s.client.users(**scope)
    return "\n".join(render.user(u) for u in users) if users else "No users match."


@tool
def create_channel(
    name: Annotated[str, Field(description="Handle: lowercase letters, digits, '-', e.g. 'q3-audit'.")],
    display_name: Annotated[str, Field(description="Shown name, e.g. 'Q3 Audit'.")] = "",
    private: Annotated[bool, Field(description="True for a private channel.")] = False,
    purpose: Annotated[str, Field(description="One line on what the channel is for.")] = "",
) -> str:
    """Create a channel; you become its first member. Example:
    create_channel(name="q3-audit", display_name="Q3 Audit", private=True)."""
    s = session()
    handle = "-".join(name.strip().lstrip("#~").lower().split())
    created = s.client.create_channel(
        s.team.id,
        handle,
        display_name.strip() or handle.replace("-", " ").title(),
        "P" if private else "O",
        purpose=purpose,
    )
    return f"Created {'private' if private else 'public'} channel #{created.name} (channel_id={created.id})."


@tool
def add_channel_member(
    channel: ChannelRef,
    username: Annotated[
        str, Field(description="Who to add, e.g. 'raj.patel'; your own username joins a public channel.")
    ],
) -> str:
    """Add a person to a channel (or join a public channel yourself). Example:
    add_channel_member(channel="q3-audit", username="raj.patel")."""
    s = session()
    target, user = s.find_channel(channel), s.find_user(username)
    try:
        s.client.add_channel_member(target.id, user.id)
    except ApiError as exc:
        # Mattermost: adding others needs the channel's membership; joining a public one does not.
        if exc.status == 403 and target.type == "O" and user.id != s.me.id:
            raise ToolError(
                f"{explain(exc)} Only members of {s.label(target)} can add people; join first with "
                f'add_channel_member(channel="{target.name}", username="{s.me.username}").'
            ) from None
        raise
    return f"@{user.username} is now a member of {s.label(target)}."


def _workspace_file(path: str) -> Path:
    candidate = Path(path.strip())
    full = (candidate if candidate.is_absolute() else WORKSPACE / candidate).resolve()
    if full != WORKSPACE and WORKSPACE not in full.parents:
        raise ToolError(f"'{path}' is outside /workspace; only files in /workspace can be attached")
    if not full.is_file():
        raise ToolError(f"no file '{full}'; list /workspace to see what is there")
    if full.stat().st_size > MAX_UPLOAD_BYTES:
        raise ToolError(f"'{full.name}' is larger than 50 MB")
    return full


@tool
def attach_file(
    channel: ChannelRef,
    path: Annotated[str, Field(description="File in /workspace, e.g. 'reports/q1.xlsx'.")],
    message: Annotated[str, Field(description="Optional text to go with the file.")] = "",
    post_id: Annotated[str, Field(description="Optional: post in this message's thread.")] = "",
) -> str:
    """Share a file from /workspace in a channel, a direct message ('@username') or a thread. Example:
    attach_file(channel="finance", path="q1_summary.xlsx", message="Q1 summary attached")."""
    s = session()
    source = _workspace_file(path)
    if post_id.strip():
        parent = s.client.get_post(post_id.strip())
        target, root = s.client.channel(parent.channel_id), parent.root_id or parent.id
    else:
        target, root = s.find_channel(channel), ""
    info = s.client.upload_file(target.id, source.name, source.read_bytes())
    return _post(target.id, message, root_id=root, file_ids=[info.id]).replace(
        "Posted", f"Shared {source.name}", 1
    )


# Posting twice posts twice; a reaction, a membership or a channel name exists once, so a repeat adds nothing.
TOOLS = {
    "list_channels": READ_ONLY,
    "read_channel": READ_ONLY,
    "read_thread": READ_ONLY,
    "post_message": writes(destructive=False, idempotent=False),
    "reply_in_thread": writes(destructive=False, idempotent=False),
    "send_direct_message": writes(destructive=False, idempotent=False),
    "add_reaction": writes(destructive=False, idempotent=True),
    "search_messages": READ_ONLY,
    "get_user": READ_ONLY,
    "list_users": READ_ONLY,
    "create_channel": writes(destructive=False, idempotent=True),
    "add_channel_member": writes(destructive=False, idempotent=True),
    "attach_file": writes(destructive=False, idempotent=False),
}


def _close() -> None:
    if _session is not None:
        _session.client.close()


def build_server() -> MCPServer:
    """The tools are this module's functions (docstring = description); answers are text only."""
    return make_server("chat", INSTRUCTIONS, sys.modules[__name__], TOOLS, _close, structured_output=False)


def main() -> None:
    run_stdio(build_server())
