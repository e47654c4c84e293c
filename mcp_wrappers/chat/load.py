"""Load a chat file through the Mattermost API: `python3 -m mcp_wrappers.chat.load FILE...`.

Run as root by the chat app's image/start once the service answers, once per chat file (the world's,
then task overlay; each adds to what is there). Only API v4 calls are used, so
the same file loads into a real Mattermost (see docs/chat.md):

- the first account ever created becomes system admin (Mattermost's own rule);
  its personal access token goes to /egym/secrets/chat-admin-token (root, 0600);
- users, the team, channels and memberships are created by that admin, or by a
  channel's first member so the creator is a person from the file;
- posts are created with their author's token. Mattermost keeps a client's
  `create_at` only when the session has manage_system, so authors of dated posts
  are system admins while their posts are written and get their roles back after;
- the agent user's token goes to /home/agent/.config/egym/chat.env (agent, 0600).
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from mcp_wrappers.chat.chatfile import (
    ChatFile,
    SeedChannel,
    SeedPost,
    SeedReply,
    dm_usernames,
    load_chat_file,
)
from mcp_wrappers.chat.client import (
    ADMIN_TOKEN_FILE,
    AGENT_ENV_FILE,
    DEFAULT_URL,
    ApiError,
    Channel,
    MattermostClient,
    Team,
    User,
)

ADMIN_USERNAME = "admin"
ADMIN_ROLES = "system_user system_admin"


# -- BOOTSTRAP: the only place that depends on how a fresh server hands out its first admin ---------
def bootstrap_admin(url: str, token_file: Path) -> MattermostClient:
    """The admin client: from the saved token, or by creating the server's first account.

    On a fresh Mattermost (real or this project's service) the first account created without a session
    becomes system admin. We log in once and exchange the session for a personal access token (real
    Mattermost needs ServiceSettings.EnableUserAccessTokens=true; images/mattermost/ sets it).
    """
    if token_file.exists():
        return MattermostClient(url, token_file.read_text().strip())
    anonymous = MattermostClient(url)
    password = secrets.token_urlsafe(24)
    user = anonymous.create_user(
        username=ADMIN_USERNAME,
        email="admin@example.com",
        password=password,
        first_name="System",
        last_name="Admin",
    )
    session = anonymous.with_token(anonymous.login(ADMIN_USERNAME, password))
    token = session.create_token(user.id, "egym: chat loader and grader snapshot")
    token_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token.token + "\n")
    return anonymous.with_token(token.token)


# -- end of BOOTSTRAP ------------------------------------------------------------------------------


class Loader:
    """One chat file applied on top of the server's current state."""

    def __init__(self, admin: MattermostClient, chat: ChatFile):
        self.admin, self.chat = admin, chat
        self.users: dict[str, User] = {}
        self.channels: dict[str, Channel] = {}
        self._clients: dict[str, tuple[MattermostClient, str]] = {}  # username -> (client, token id)
        self.team: Team

    def user(self, username: str) -> User:
        if username not in self.users:
            try:
                self.users[username] = self.admin.user_by_username(username)
            except ApiError:
                raise ValueError(f"user '{username}' is neither in this file nor on the server") from None
        return self.users[username]

    def as_user(self, username: str) -> MattermostClient:
        """A client acting as `username` (a personal access token revoked when loading ends)."""
        if username not in self._clients:
            token = self.admin.create_token(
                self.user(username).id, "egym: chat loader (revoked after loading)"
            )
            self._clients[username] = (self.admin.with_token(token.token), token.id)
        return self._clients[username][0]

    def close(self) -> None:
        for _, token_id in self._clients.values():
            self.admin.revoke_token(token_id)

    # -- steps ---------------------------------------------------------------

    def ensure_team(self) -> None:
        wanted = self.chat.team
        if wanted is not None:
            try:
                self.team = self.admin.team_by_name(wanted.name)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                self.team = self.admin.create_team(wanted.name, wanted.display_name)
            return
        teams = self.admin.user_teams()
        if len(teams) != 1:
            raise ValueError(
                f"the file names no team and the server has {len(teams)}; add `team: {{name: ...}}`"
            )
        self.team = teams[0]

    def ensure_users(self) -> None:
        for spec in self.chat.users:
            try:
                user = self.admin.user_by_username(spec.username)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                user = self.admin.create_user(
                    username=spec.username,
                    email=spec.email or f"{spec.username}@example.com",
                    password=secrets.token_urlsafe(24),
                    first_name=spec.first_name,
                    last_name=spec.last_name,
                    nickname=spec.nickname,
                    position=spec.position,
                )
            self.users[spec.username] = user
            self.admin.add_team_member(self.team.id, user.id)

    def ensure_channel(self, spec: SeedChannel) -> None:
        members = [self.user(m) for m in spec.members]
        try:
            channel = self.admin.channel_by_name(self.team.id, spec.name)
        except ApiError as exc:
            if exc.status != 404:
                raise
            creator = self.as_user(spec.members[0]) if spec.members else self.admin
            display = spec.display_name or spec.name.replace("-", " ").title()
            channel = creator.create_channel(
                self.team.id, spec.name, display, spec.type, purpose=spec.purpose, header=spec.header
            )
        for member in members:
            self.admin.add_channel_member(channel.id, member.id)
        self.channels[spec.name] = channel

    def channel_for(self, post: SeedPost) -> Channel:
        names = dm_usernames(post.channel)
        key = post.channel if names is None else "dm:" + ",".join(names)
        if key in self.channels:
            return self.channels[key]
        if names is None:
            try:
                channel = self.admin.channel_by_name(self.team.id, post.channel)
            except ApiError:
                raise ValueError(f"post in unknown channel '{post.channel}'") from None
        elif post.user not in names or len(names) < 2:
            raise ValueError(
                f"'{post.channel}': a direct message needs 2+ names, the author '{post.user}' among them"
            )
        elif len(names) == 2:
            channel = self.as_user(post.user).direct_channel(self.user(names[0]).id, self.user(names[1]).id)
        else:
            channel = self.as_user(post.user).group_channel([self.user(n).id for n in names])
        self.channels[key] = channel
        return channel

    def write_post(self, spec: SeedReply, channel: Channel, root_id: str = "") -> None:
        author = self.as_user(spec.user)
        file_ids = [author.upload_file(channel.id, f.name, f.text.encode()).id for f in spec.files]
        post = author.create_post(
            channel.id, spec.message, root_id=root_id, file_ids=file_ids, create_at=spec.millis()
        )
        for reaction in spec.reactions:
            self.as_user(reaction.user).add_reaction(self.user(reaction.user).id, post.id, reaction.emoji)
        if isinstance(spec, SeedPost):
            for reply in spec.replies:
                self.write_post(reply, channel, post.id)

    def write_posts(self) -> None:
        """Dated posts need their authors to be admins while they are written; roles are restored after."""
        dated = {p.user for post in self.chat.posts for p in (post, *post.replies) if p.create_at is not None}
        restore = {
            name: self.user(name).roles for name in dated if "system_admin" not in self.user(name).roles
        }
        try:
            for name in restore:
                self.admin.set_roles(self.user(name).id, ADMIN_ROLES)
            for post in self.chat.posts:
                self.write_post(post, self.channel_for(post))
        finally:
            for name, roles in restore.items():
                self.admin.set_roles(self.user(name).id, roles or "system_user")

    def agent_token(self) -> str:
        username = self.chat.agent_user
        assert username is not None
        return self.admin.create_token(self.user(username).id, "egym: the agent's MCP server").token

    def run(self) -> None:
        self.ensure_team()
        self.ensure_users()
        for spec in self.chat.channels:
            self.ensure_channel(spec)
        self.write_posts()


def write_agent_env(path: Path, values: dict[str, str]) -> None:
    """KEY=VALUE file readable by the agent only (the agent's chat identity, nobody else's)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.writelines(f"{key}={value}\n" for key, value in values.items())
    try:
        agent = pwd.getpwnam("agent")
    except KeyError:
        return  # not in the rollout image (a developer machine): leave the file to the caller
    for target in (path.parent.parent, path.parent, path):
        if str(target).startswith(agent.pw_dir):
            os.chown(target, agent.pw_uid, agent.pw_gid)


def seed_file(path: Path, *, url: str, admin_token_file: Path, agent_env_file: Path) -> str:
    chat = load_chat_file(path)
    admin = bootstrap_admin(url, admin_token_file)
    loader = Loader(admin, chat)
    try:
        loader.run()
        if chat.agent_user:
            write_agent_env(
                agent_env_file,
                {
                    "MATTERMOST_URL": url,
                    "MATTERMOST_TOKEN": loader.agent_token(),
                    "MATTERMOST_USERNAME": chat.agent_user,
                    "MATTERMOST_TEAM": loader.team.name,
                },
            )
    finally:
        loader.close()
    return f"{path.name}: {len(chat.users)} users, {len(chat.channels)} channels, {len(chat.posts)} posts" + (
        f", agent {chat.agent_user}" if chat.agent_user else ""
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m mcp_wrappers.chat.load", description=__doc__.split("\n")[0]
    )
    parser.add_argument("files", nargs="+", type=Path, help="chat file (YAML or JSON), applied in order")
    parser.add_argument("--url", default=os.environ.get("MATTERMOST_URL", DEFAULT_URL))
    parser.add_argument("--admin-token-file", type=Path, default=ADMIN_TOKEN_FILE)
    parser.add_argument("--agent-env-file", type=Path, default=AGENT_ENV_FILE)
    args = parser.parse_args(argv)
    for path in args.files:
        try:
            print(
                seed_file(
                    path,
                    url=args.url,
                    admin_token_file=args.admin_token_file,
                    agent_env_file=args.agent_env_file,
                )
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            print(f"chat file {path}: {where}: {err['msg']} ({exc.error_count()} error(s))", file=sys.stderr)
            return 1
        except (ApiError, ValueError, OSError, yaml.YAMLError) as exc:
            # One line: egym-init reports the last line of this output as the load error.
            print(f"chat file {path}: {' '.join(str(exc).split())}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
