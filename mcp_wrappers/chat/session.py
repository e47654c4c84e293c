"""The agent's view of chat: who "me" is, which team, and names -> objects with helpful misses.

Unknown channel or user names raise a ToolError that lists the close matches
(difflib), so the model can correct itself in one step.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import cached_property

from mcp.server.mcpserver.exceptions import ToolError

from mcp_wrappers.chat.client import ApiError, Channel, MattermostClient, Team, User

ID_RE = re.compile(r"^[a-z0-9]{26}$")


def suggest(wanted: str, names: list[str]) -> str:
    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
    if not close:
        close = [n for n in names if wanted in n][:5]
    return f" Did you mean: {', '.join(close)}?" if close else ""


class ChatSession:
    def __init__(self, client: MattermostClient):
        self.client = client
        self._names: dict[str, str] = {}

    @cached_property
    def me(self) -> User:
        return self.client.me()

    @cached_property
    def team(self) -> Team:
        wanted = os.environ.get("MATTERMOST_TEAM", "")
        teams = self.client.user_teams()
        for team in teams:
            if team.name == wanted or (not wanted and len(teams) == 1):
                return team
        raise ToolError(
            f"cannot tell which team to use (member of: {', '.join(t.name for t in teams) or 'none'});"
            " set MATTERMOST_TEAM"
        )

    # -- users ---------------------------------------------------------------

    def username(self, user_id: str) -> str:
        if user_id not in self._names:
            for user in self.client.users_by_ids([user_id]):
                self._names[user.id] = user.username
        return self._names.get(user_id, user_id)

    def remember(self, users: list[User]) -> None:
        self._names.update({u.id: u.username for u in users})

    def find_user(self, ref: str) -> User:
        name = ref.strip().lstrip("@").lower()
        if not name:
            raise ToolError("give a username, e.g. 'raj.patel'")
        try:
            return self.client.user_by_username(name)
        except ApiError as exc:
            if exc.status != 404:
                raise
        users = self.client.users(in_team=self.team.id)
        self.remember(users)
        by_full_name = [u for u in users if u.full_name.lower() == name or u.email.lower() == name]
        if len(by_full_name) == 1:
            return by_full_name[0]
        names = [u.username for u in users]
        raise ToolError(f"No user '{ref}'.{suggest(name, names)} Use list_users to see everyone.")

    # -- channels ------------------------------------------------------------

    def label(self, channel: Channel) -> str:
        """'#finance' for channels, '@raj.patel' for a DM with me, '@a, @b' for group messages."""
        if channel.type == "D":
            others = [i for i in channel.name.split("__") if i != self.me.id] or [self.me.id]
            return "@" + self.username(others[0])
        if channel.type == "G":
            return ", ".join(
                "@" + n.strip() for n in channel.display_name.split(",") if n.strip() != self.me.username
            )
        return "#" + channel.name

    def visible_channels(self) -> list[Channel]:
        """My channels (DMs included) and the team's public channels I could join."""
        mine = self.client.my_channels(self.team.id)
        seen = {c.id for c in mine}
        return mine + [c for c in self.client.public_channels(self.team.id) if c.id not in seen]

    def my_channel_ids(self) -> set[str]:
        return {c.id for c in self.client.my_channels(self.team.id)}

    def find_channel(self, ref: str) -> Channel:
        raw = ref.strip()
        if raw.startswith("@"):
            return self.client.direct_channel(self.me.id, self.find_user(raw).id)
        name = raw.lstrip("#~").lower()
        if ID_RE.match(name):
            return self.client.channel(name)
        channels = self.visible_channels()
        for channel in channels:
            if name in (channel.name, channel.display_name.lower()):
                return channel
        names = [c.name for c in channels if c.type in ("O", "P")]
        raise ToolError(
            f"No channel '{ref}' that you can see.{suggest(name, names)} "
            "Use list_channels to see all channels; '@username' opens a direct message."
        )
