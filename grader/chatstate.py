"""The chat workspace's final state, as printed by `python3 -m mcp_wrappers.chat.snapshot`.

Channels are named by their `name`; direct messages as `dm:alice,bob` (the
usernames sorted). Posts carry usernames, not ids, so checks read naturally.
"""

from __future__ import annotations

from pydantic import Field

from core.strict import StrictModel


class ChatUser(StrictModel):
    id: str
    username: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    position: str = ""


class ChatChannel(StrictModel):
    id: str
    name: str
    display_name: str = ""
    type: str = Field("O", description="O public, P private, D direct, G group.")
    header: str = ""
    purpose: str = ""
    members: list[str] = Field(default_factory=list, description="Usernames.")


class ChatReaction(StrictModel):
    user: str
    emoji: str


class ChatPost(StrictModel):
    id: str
    channel: str = Field(description="Channel name; `dm:alice,bob` for direct messages.")
    user: str = Field(description="Author's username.")
    message: str = ""
    root_id: str | None = Field(
        None, description="Id of the thread's first post; empty/None for a root post."
    )
    create_at: int = Field(0, description="Milliseconds since the epoch.")
    reactions: list[ChatReaction] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list, description="Names of attached files.")


class ChatSnapshot(StrictModel):
    users: list[ChatUser] = Field(default_factory=list)
    channels: list[ChatChannel] = Field(default_factory=list)
    posts: list[ChatPost] = Field(default_factory=list)

    def channel(self, name: str) -> ChatChannel | None:
        name = dm_name(name)
        return next((c for c in self.channels if c.name == name), None)

    def user(self, username: str) -> ChatUser | None:
        username = username.lstrip("@")
        return next((u for u in self.users if u.username == username), None)

    def post(self, post_id: str) -> ChatPost | None:
        return next((p for p in self.posts if p.id == post_id), None)

    def posts_in(self, channel: str | None = None) -> list[ChatPost]:
        """Posts in a channel (all posts when None), oldest first."""
        wanted = dm_name(channel) if channel else None
        return sorted(
            (p for p in self.posts if wanted is None or p.channel == wanted), key=lambda p: p.create_at
        )


def dm_name(channel: str) -> str:
    """Normalise `dm:bob,alice` / `@bob` spellings of a direct channel to the snapshot's `dm:alice,bob`."""
    channel = channel.lstrip("#")
    if channel.startswith("dm:"):
        users = sorted(u.strip().lstrip("@") for u in channel[3:].split(",") if u.strip())
        return "dm:" + ",".join(users)
    return channel
