"""The chat file format (YAML or JSON), validated strictly: a typo is an error, not a default.

    agent_user: dana.lee                 # whose token the agent's MCP server gets (optional)
    team: {name: acme, display_name: Acme Corp}   # optional in a second file: the existing team is used
    users:
      - {username: dana.lee, first_name: Dana, last_name: Lee, email: dana.lee@acme.example,
         position: Finance Analyst}
    channels:
      - {name: finance, display_name: Finance, type: P, purpose: Month-end close,
         members: [dana.lee, raj.patel]}
    posts:
      - channel: finance                 # a channel name, or dm:alice,bob (a group DM with 3+ names)
        user: raj.patel
        create_at: 2024-03-04T09:15:00Z  # ISO 8601 (UTC when no offset) or epoch milliseconds
        message: Can you check the Q1 accruals?
        reactions: [{user: dana.lee, emoji: eyes}]
        files: [{name: accruals.csv, text: "account,amount\\n4100,1200\\n"}]
        replies:
          - {user: dana.lee, create_at: 2024-03-04T09:20:00Z, message: On it.}

Users, channels and posts of a later file are added to what earlier files made
(the world's file, then a task's); an existing channel gains the new members.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Strict(BaseModel):
    """core.strict.StrictModel's rule; this module also runs in the container, where only mcp_wrappers is."""

    model_config = ConfigDict(extra="forbid")


class SeedTeam(_Strict):
    name: str = Field(description="URL name of the team, e.g. 'acme'.")
    display_name: str = Field(description="Shown name, e.g. 'Acme Corp'.")


class SeedUser(_Strict):
    username: str = Field(description="Lowercase handle, e.g. 'dana.lee'.")
    first_name: str = ""
    last_name: str = ""
    email: str | None = Field(None, description="Defaults to <username>@example.com.")
    nickname: str = ""
    position: str = Field("", description="Job title shown in the profile.")


class SeedChannel(_Strict):
    name: str = Field(description="Lowercase channel handle, e.g. 'finance'.")
    display_name: str | None = Field(None, description="Defaults to the name, capitalised.")
    type: Literal["O", "P"] = Field("O", description="O = public, P = private.")
    purpose: str = ""
    header: str = ""
    members: list[str] = Field(
        default_factory=list, description="Usernames; the first one creates the channel."
    )


class SeedReaction(_Strict):
    user: str
    emoji: str = Field(description="Emoji name without colons, e.g. 'thumbsup'.")


class SeedFile(_Strict):
    name: str = Field(description="File name shown in chat, e.g. 'q1.csv'.")
    text: str = Field(description="The file's content (UTF-8 text).")


class SeedReply(_Strict):
    user: str
    message: str
    create_at: dt.datetime | int | None = Field(
        None, description="ISO 8601 or epoch ms; omitted = load time."
    )
    reactions: list[SeedReaction] = Field(default_factory=list)
    files: list[SeedFile] = Field(default_factory=list)

    @field_validator("create_at")
    @classmethod
    def _utc(cls, value: dt.datetime | int | None) -> dt.datetime | int | None:
        if isinstance(value, dt.datetime) and value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value

    def millis(self) -> int | None:
        if isinstance(self.create_at, dt.datetime):
            return int(self.create_at.timestamp() * 1000)
        return self.create_at


class SeedPost(SeedReply):
    channel: str = Field(description="Channel name, or 'dm:alice,bob' for a direct (or group) message.")
    replies: list[SeedReply] = Field(default_factory=list)


class ChatFile(_Strict):
    agent_user: str | None = Field(
        None, description="Username the agent acts as; its token goes to chat.env."
    )
    team: SeedTeam | None = None
    users: list[SeedUser] = Field(default_factory=list)
    channels: list[SeedChannel] = Field(default_factory=list)
    posts: list[SeedPost] = Field(default_factory=list)


def load_chat_file(path: Path) -> ChatFile:
    data = yaml.safe_load(path.read_text())  # JSON is YAML too
    return ChatFile.model_validate(data or {})


def dm_usernames(channel: str) -> list[str] | None:
    """['alice', 'bob'] for 'dm:alice,bob'; None for a channel name."""
    if not channel.startswith("dm:"):
        return None
    return sorted({name.strip().lstrip("@") for name in channel[3:].split(",") if name.strip()})
