"""The one Mattermost API v4 client: used by the MCP server, the chat loader and the snapshot CLI.

httpx with typed helpers. Response models ignore fields they do not name
(real Mattermost returns many more), so the same code reads this project's
chat service and a real Mattermost server. Any non-2xx answer raises
`ApiError` carrying Mattermost's error id and message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_URL = "http://127.0.0.1:8065"
AGENT_ENV_FILE = Path("/home/agent/.config/egym/chat.env")
ADMIN_TOKEN_FILE = Path("/egym/secrets/chat-admin-token")
PAGE = 200
RETRY_PAUSES_S = (0.2, 0.5, 1.0, 2.0, 4.0)  # before each retry of a GET whose answer is not JSON
# How GET /users/{id}/channels begins for a user in no channel (api4/channel.go, getChannelsForUser).
NO_CHANNELS_STREAMED = '[{"id":"app.channel.get_channels.not_found.app_error"'


class ApiError(Exception):
    def __init__(self, status: int, error_id: str, message: str):
        super().__init__(f"{message} ({status} {error_id})" if status else message)
        self.status, self.error_id, self.message = status, error_id, message


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class User(_Model):
    id: str
    username: str
    first_name: str = ""
    last_name: str = ""
    nickname: str = ""
    email: str = ""
    position: str = ""
    roles: str = ""
    delete_at: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


class Team(_Model):
    id: str
    name: str
    display_name: str = ""
    type: str = "O"


class Channel(_Model):
    id: str
    team_id: str = ""
    type: str
    name: str
    display_name: str = ""
    header: str = ""
    purpose: str = ""
    last_post_at: int = 0
    total_msg_count: int = 0


class ChannelMember(_Model):
    channel_id: str
    user_id: str
    roles: str = ""


class Reaction(_Model):
    user_id: str
    post_id: str
    emoji_name: str
    create_at: int = 0


class FileInfo(_Model):
    id: str
    name: str
    size: int = 0
    mime_type: str = ""
    post_id: str = ""
    channel_id: str = ""


class PostMetadata(_Model):
    reactions: list[Reaction] | None = None
    files: list[FileInfo] | None = None


class Post(_Model):
    id: str
    channel_id: str
    user_id: str
    root_id: str = ""
    message: str = ""
    type: str = ""
    create_at: int
    update_at: int = 0
    edit_at: int = 0
    delete_at: int = 0
    file_ids: list[str] | None = None
    reply_count: int = 0
    metadata: PostMetadata = Field(default_factory=PostMetadata)

    @property
    def reactions(self) -> list[Reaction]:
        return self.metadata.reactions or []

    @property
    def files(self) -> list[FileInfo]:
        return self.metadata.files or []


class PostList(_Model):
    order: list[str] = Field(default_factory=list)
    posts: dict[str, Post] = Field(default_factory=dict)
    has_next: bool = False
    prev_post_id: str = ""

    def ordered(self) -> list[Post]:
        """Posts in the server's order (newest first for channel pages, searches and threads)."""
        return [self.posts[i] for i in self.order if i in self.posts]


class AccessToken(_Model):
    id: str
    token: str
    user_id: str
    description: str = ""


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines (the agent's chat.env); missing file -> {}."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    pairs = (
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#")
    )
    return {k.strip(): v.strip() for k, v in pairs}


class MattermostClient:
    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout_s: float = 15,
        http: httpx.Client | None = None,
    ):
        self.url, self.token = url.rstrip("/"), token
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        # Certificates are loaded only for https (loading them costs ~80 ms per client).
        self._http = http or httpx.Client(
            base_url=self.url + "/api/v4", timeout=timeout_s, verify=self.url.startswith("https:")
        )

    @classmethod
    def for_agent(cls) -> MattermostClient:
        """Configured from MATTERMOST_URL / MATTERMOST_TOKEN, falling back to the agent's chat.env."""
        env = read_env_file(AGENT_ENV_FILE) | {
            k: v for k, v in os.environ.items() if k.startswith("MATTERMOST_")
        }
        return cls(env.get("MATTERMOST_URL", DEFAULT_URL), env.get("MATTERMOST_TOKEN") or None)

    def with_token(self, token: str) -> MattermostClient:
        """The same server as another user; shares this client's connection pool."""
        return MattermostClient(self.url, token, http=self._http)

    def close(self) -> None:
        self._http.close()

    # -- transport -----------------------------------------------------------

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, headers=self._auth, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(0, "connection", f"chat server at {self.url} did not answer: {exc}") from None
        if response.is_success:
            return response
        try:
            body = response.json()
            error_id, message = body.get("id", ""), body.get("message", "") or response.reason_phrase
        except ValueError:
            error_id, message = "", response.text[:200] or response.reason_phrase
        raise ApiError(response.status_code, error_id, message)

    def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        """The answer's JSON. A 2xx body that is not JSON raises ApiError; a GET, which changes
        nothing, is tried again first, after a growing pause, in case the body was cut short."""
        return self._json(self.request(method, path, **kwargs), method, path, **kwargs)

    def _json(self, response: httpx.Response, method: str, path: str, **kwargs: Any) -> Any:
        for pause in RETRY_PAUSES_S if method == "GET" else ():
            try:
                return response.json()
            except ValueError:
                time.sleep(pause)
                response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise self._not_json(method, path, response) from None

    @staticmethod
    def _not_json(method: str, path: str, response: httpx.Response) -> ApiError:
        return ApiError(
            response.status_code,
            "invalid_json",
            f"chat server answered {method} {path} with a body that is not JSON: {response.text[:120]!r}",
        )

    def get(self, path: str, **params: Any) -> Any:
        return self.request_json("GET", path, params=params or None)

    def post(self, path: str, body: Any = None, **params: Any) -> Any:
        return self.request_json("POST", path, json=body, params=params or None)

    def _pages(self, path: str, **params: Any) -> Iterator[Any]:
        page = 0
        while True:
            batch = self.get(path, page=page, per_page=PAGE, **params)
            yield from batch
            if len(batch) < PAGE:
                return
            page += 1

    # -- users and tokens ----------------------------------------------------

    def me(self) -> User:
        return User.model_validate(self.get("/users/me"))

    def user(self, user_id: str) -> User:
        return User.model_validate(self.get(f"/users/{user_id}"))

    def user_by_username(self, username: str) -> User:
        return User.model_validate(self.get(f"/users/username/{username.lstrip('@').lower()}"))

    def users(self, **filters: str) -> list[User]:
        """Every user (all pages); filters as Mattermost's: in_team, in_channel, not_in_channel."""
        return [User.model_validate(u) for u in self._pages("/users", **filters)]

    def search_users(self, term: str, **scope: str) -> list[User]:
        return [User.model_validate(u) for u in self.post("/users/search", {"term": term, **scope})]

    def users_by_ids(self, user_ids: list[str]) -> list[User]:
        return [User.model_validate(u) for u in self.post("/users/ids", user_ids)] if user_ids else []

    def create_user(self, **fields: str) -> User:
        return User.model_validate(self.post("/users", fields))

    def login(self, login_id: str, password: str) -> str:
        """A session token for the account."""
        return self.request(
            "POST", "/users/login", json={"login_id": login_id, "password": password}
        ).headers["Token"]

    def create_token(self, user_id: str, description: str) -> AccessToken:
        return AccessToken.model_validate(self.post(f"/users/{user_id}/tokens", {"description": description}))

    def revoke_token(self, token_id: str) -> None:
        self.post("/users/tokens/revoke", {"token_id": token_id})

    def set_roles(self, user_id: str, roles: str) -> None:
        self.request("PUT", f"/users/{user_id}/roles", json={"roles": roles})

    # -- teams ---------------------------------------------------------------

    def team_by_name(self, name: str) -> Team:
        return Team.model_validate(self.get(f"/teams/name/{name}"))

    def user_teams(self, user_id: str = "me") -> list[Team]:
        return [Team.model_validate(t) for t in self.get(f"/users/{user_id}/teams")]

    def create_team(self, name: str, display_name: str, kind: str = "O") -> Team:
        return Team.model_validate(
            self.post("/teams", {"name": name, "display_name": display_name, "type": kind})
        )

    def add_team_member(self, team_id: str, user_id: str) -> None:
        self.post(f"/teams/{team_id}/members", {"team_id": team_id, "user_id": user_id})

    # -- channels ------------------------------------------------------------

    def channel(self, channel_id: str) -> Channel:
        return Channel.model_validate(self.get(f"/channels/{channel_id}"))

    def channel_by_name(self, team_id: str, name: str) -> Channel:
        return Channel.model_validate(self.get(f"/teams/{team_id}/channels/name/{name}"))

    def my_channels(self, team_id: str, user_id: str = "me") -> list[Channel]:
        """Channels the user belongs to in the team, direct and group messages included."""
        return [Channel.model_validate(c) for c in self.get(f"/users/{user_id}/teams/{team_id}/channels")]

    def user_channels(self, user_id: str) -> list[Channel]:
        """Every channel the user is in, in every team. Real Mattermost streams this list: it has
        written `[` before it looks, so a user in no channel gets `[` and then its not-found error
        document, with status 200. That is an empty list. (Such a user appears by itself: the server
        makes its `system-bot` when its post-reminder job first runs, at the next five-minute mark.)"""
        path = f"/users/{user_id}/channels"
        response = self.request("GET", path)
        if response.text.startswith(NO_CHANNELS_STREAMED):
            return []
        return [Channel.model_validate(c) for c in self._json(response, "GET", path)]

    def public_channels(self, team_id: str) -> list[Channel]:
        return [Channel.model_validate(c) for c in self._pages(f"/teams/{team_id}/channels")]

    def all_channels(self) -> list[Channel]:
        """Every public and private channel of every team (system admins only)."""
        return [Channel.model_validate(c) for c in self._pages("/channels")]

    def search_channels(self, team_id: str, term: str) -> list[Channel]:
        return [
            Channel.model_validate(c) for c in self.post(f"/teams/{team_id}/channels/search", {"term": term})
        ]

    def create_channel(
        self,
        team_id: str,
        name: str,
        display_name: str,
        kind: str = "O",
        *,
        purpose: str = "",
        header: str = "",
    ) -> Channel:
        body = {
            "team_id": team_id,
            "name": name,
            "display_name": display_name,
            "type": kind,
            "purpose": purpose,
            "header": header,
        }
        return Channel.model_validate(self.post("/channels", body))

    def direct_channel(self, user_a: str, user_b: str) -> Channel:
        return Channel.model_validate(self.post("/channels/direct", [user_a, user_b]))

    def group_channel(self, user_ids: list[str]) -> Channel:
        return Channel.model_validate(self.post("/channels/group", user_ids))

    def channel_members(self, channel_id: str) -> list[ChannelMember]:
        return [ChannelMember.model_validate(m) for m in self._pages(f"/channels/{channel_id}/members")]

    def add_channel_member(self, channel_id: str, user_id: str) -> ChannelMember:
        return ChannelMember.model_validate(
            self.post(f"/channels/{channel_id}/members", {"user_id": user_id})
        )

    def remove_channel_member(self, channel_id: str, user_id: str) -> None:
        self.request("DELETE", f"/channels/{channel_id}/members/{user_id}")

    # -- posts, reactions, files ---------------------------------------------

    def create_post(
        self,
        channel_id: str,
        message: str,
        *,
        root_id: str = "",
        file_ids: list[str] | None = None,
        create_at: int | None = None,
    ) -> Post:
        body: dict[str, Any] = {"channel_id": channel_id, "message": message, "root_id": root_id}
        if file_ids:
            body["file_ids"] = file_ids
        if create_at:
            body["create_at"] = create_at  # honoured for system admins only (Mattermost's rule)
        return Post.model_validate(self.post("/posts", body))

    def get_post(self, post_id: str) -> Post:
        return Post.model_validate(self.get(f"/posts/{post_id}"))

    def thread(self, post_id: str) -> PostList:
        return PostList.model_validate(self.get(f"/posts/{post_id}/thread"))

    def channel_posts(
        self, channel_id: str, *, page: int = 0, per_page: int = 30, collapsed: bool = False, before: str = ""
    ) -> PostList:
        params: dict[str, Any] = {"page": page, "per_page": per_page}
        if collapsed:
            params["collapsedThreads"] = "true"
        if before:
            params["before"] = before
        return PostList.model_validate(self.get(f"/channels/{channel_id}/posts", **params))

    def all_channel_posts(self, channel_id: str) -> list[Post]:
        posts, page = [], 0
        while True:
            batch = self.channel_posts(channel_id, page=page, per_page=PAGE)
            posts += [batch.posts[i] for i in batch.order]
            if len(batch.order) < PAGE:
                return posts
            page += 1

    def search_posts(self, team_id: str, terms: str, *, page: int = 0, per_page: int = 20) -> PostList:
        body = {"terms": terms, "is_or_search": False, "page": page, "per_page": per_page}
        return PostList.model_validate(self.post(f"/teams/{team_id}/posts/search", body))

    def add_reaction(self, user_id: str, post_id: str, emoji: str) -> Reaction:
        body = {"user_id": user_id, "post_id": post_id, "emoji_name": emoji}
        return Reaction.model_validate(self.post("/reactions", body))

    def upload_file(self, channel_id: str, name: str, data: bytes) -> FileInfo:
        answer = self.request_json(
            "POST", "/files", data={"channel_id": channel_id}, files={"files": (name, data)}
        )
        return FileInfo.model_validate(answer["file_infos"][0])

    def file_info(self, file_id: str) -> FileInfo:
        return FileInfo.model_validate(self.get(f"/files/{file_id}/info"))

    def post_files(self, post_id: str) -> list[FileInfo]:
        return [FileInfo.model_validate(f) for f in self.get(f"/posts/{post_id}/files/info")]
