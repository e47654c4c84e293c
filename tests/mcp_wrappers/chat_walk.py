"""Run INSIDE the rollout container (as root) by test_chat_openapi.py: call every endpoint the chat
service serves, good and bad, and print every exchange as JSON lines for the host to validate:
{"method", "route" (the path template), "status", "body" (parsed JSON, or null for binary)}.

Uses the admin token (/egym/secrets/chat-admin-token) and the agent's (~agent/.config/egym/chat.env)
left by the chat file in tests/mcp_wrappers/data/.
"""

import json
import sys
from pathlib import Path

import httpx

BASE = "http://127.0.0.1:8065/api/v4"
ADMIN = Path("/egym/secrets/chat-admin-token").read_text().strip()
AGENT_ENV = Path("/home/agent/.config/egym/chat.env").read_text()
AGENT = dict(line.split("=", 1) for line in AGENT_ENV.split())["MATTERMOST_TOKEN"]
http = httpx.Client(timeout=10)
BAD_ID = "x" * 26  # well-formed, unknown


def call(
    method,
    route,
    token=ADMIN,
    *,
    expect,
    json_body=None,
    params=None,
    files=None,
    data=None,
    content=None,
    **path,
):
    url = BASE + route.format(**path)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = http.request(
        method, url, headers=headers, json=json_body, params=params, files=files, data=data, content=content
    )
    try:
        body = r.json()
    except ValueError:
        body = None
    print(
        json.dumps(
            {"method": method.lower(), "route": "/api/v4" + route, "status": r.status_code, "body": body}
        )
    )
    if r.status_code != expect:
        sys.exit(f"{method} {url}: expected {expect}, got {r.status_code}: {r.text[:300]}")
    return body


me = call("GET", "/users/{user_id}", AGENT, expect=200, user_id="me")
admin = call("GET", "/users/{user_id}", expect=200, user_id="me")
# users, login, tokens
walker = call(
    "POST",
    "/users",
    expect=201,
    json_body={
        "username": "walker",
        "email": "walker@example.com",
        "password": "walker-password",
        "first_name": "Wal",
    },
)
call(
    "POST",
    "/users",
    expect=400,
    json_body={"username": "walker", "email": "w2@example.com", "password": "x" * 9},
)
call(
    "POST",
    "/users",
    None,
    expect=403,
    json_body={"username": "anon", "email": "a@example.com", "password": "x" * 9},
)
call(
    "POST", "/users/login", None, expect=200, json_body={"login_id": "walker", "password": "walker-password"}
)
call("POST", "/users/login", None, expect=401, json_body={"login_id": "walker", "password": "wrong-password"})
call("GET", "/users/{user_id}", None, expect=401, user_id="me")
call("GET", "/users/{user_id}", expect=400, user_id="not-an-id")
call("GET", "/users/{user_id}", expect=404, user_id=BAD_ID)
call("GET", "/users/username/{username}", AGENT, expect=200, username="raj.patel")
call("GET", "/users/username/{username}", AGENT, expect=404, username="nobody")
call("GET", "/users", AGENT, expect=200, params={"page": 0, "per_page": 3})
call("GET", "/users", AGENT, expect=400, params={"in_team": "bad"})
call("POST", "/users/search", AGENT, expect=200, json_body={"term": "pat"})
call("POST", "/users/search", AGENT, expect=400, json_body=["not", "an", "object"])
call("POST", "/users/ids", AGENT, expect=200, json_body=[me["id"], walker["id"]])
call("POST", "/users/usernames", AGENT, expect=200, json_body=["raj.patel", "mia.wong"])
call("PUT", "/users/{user_id}/roles", expect=200, json_body={"roles": "system_user"}, user_id=walker["id"])
call(
    "PUT",
    "/users/{user_id}/roles",
    AGENT,
    expect=403,
    json_body={"roles": "system_user system_admin"},
    user_id=me["id"],
)
token = call(
    "POST", "/users/{user_id}/tokens", expect=200, json_body={"description": "walk"}, user_id=walker["id"]
)
call(
    "POST", "/users/{user_id}/tokens", AGENT, expect=403, json_body={"description": "x"}, user_id=walker["id"]
)
call("POST", "/users/tokens/revoke", expect=200, json_body={"token_id": token["id"]})
call("POST", "/users/tokens/revoke", expect=404, json_body={"token_id": token["id"]})
# teams
team = call(
    "POST", "/teams", expect=201, json_body={"name": "walk-team", "display_name": "Walk", "type": "O"}
)
call("POST", "/teams", expect=400, json_body={"name": "walk-team", "display_name": "Walk", "type": "O"})
call("GET", "/teams", AGENT, expect=200)
acme = call("GET", "/teams/name/{name}", AGENT, expect=200, name="acme")
call("GET", "/teams/name/{name}", AGENT, expect=404, name="no-such-team")
call("GET", "/teams/{team_id}", AGENT, expect=200, team_id=acme["id"])
call("GET", "/teams/{team_id}", AGENT, expect=404, team_id=BAD_ID)
call(
    "POST",
    "/teams/{team_id}/members",
    expect=201,
    json_body={"team_id": acme["id"], "user_id": walker["id"]},
    team_id=acme["id"],
)
call(
    "POST",
    "/teams/{team_id}/members",
    AGENT,
    expect=403,
    json_body={"team_id": acme["id"], "user_id": admin["id"]},
    team_id=team["id"],
)
call("GET", "/teams/{team_id}/members", AGENT, expect=200, team_id=acme["id"])
call("GET", "/teams/{team_id}/members", AGENT, expect=403, team_id=team["id"])
call("GET", "/users/{user_id}/teams", AGENT, expect=200, user_id="me")
call("GET", "/users/{user_id}/teams", AGENT, expect=403, user_id=walker["id"])
# channels
chan = call(
    "POST",
    "/channels",
    AGENT,
    expect=201,
    json_body={
        "team_id": acme["id"],
        "name": "walk",
        "display_name": "Walk",
        "type": "P",
        "purpose": "walking",
    },
)
call(
    "POST",
    "/channels",
    AGENT,
    expect=400,
    json_body={"team_id": acme["id"], "name": "walk", "display_name": "W", "type": "P"},
)
call("GET", "/channels", expect=200, params={"per_page": 100})
call("GET", "/channels", AGENT, expect=403)
call("GET", "/channels/{channel_id}", AGENT, expect=200, channel_id=chan["id"])
call("GET", "/channels/{channel_id}", AGENT, expect=404, channel_id=BAD_ID)
call("GET", "/teams/{team_id}/channels", AGENT, expect=200, team_id=acme["id"])
call("GET", "/teams/{team_id}/channels", AGENT, expect=403, team_id=team["id"])
hr = call(
    "GET",
    "/teams/{team_id}/channels/name/{channel_name}",
    expect=200,
    team_id=acme["id"],
    channel_name="hr-private",
)
call(
    "GET",
    "/teams/{team_id}/channels/name/{channel_name}",
    AGENT,
    expect=403,
    team_id=acme["id"],
    channel_name="hr-private",
)
finance = call(
    "GET",
    "/teams/name/{team_name}/channels/name/{channel_name}",
    AGENT,
    expect=200,
    team_name="acme",
    channel_name="finance",
)
call(
    "GET",
    "/teams/name/{team_name}/channels/name/{channel_name}",
    AGENT,
    expect=404,
    team_name="acme",
    channel_name="nope",
)
call(
    "POST",
    "/teams/{team_id}/channels/search",
    AGENT,
    expect=201,
    json_body={"term": "sal"},
    team_id=acme["id"],
)
call("POST", "/teams/{team_id}/channels/search", AGENT, expect=400, json_body={"term": 7}, team_id=acme["id"])
call("GET", "/users/{user_id}/teams/{team_id}/channels", AGENT, expect=200, user_id="me", team_id=acme["id"])
call(
    "GET",
    "/users/{user_id}/teams/{team_id}/channels",
    AGENT,
    expect=403,
    user_id=walker["id"],
    team_id=acme["id"],
)
call("GET", "/users/{user_id}/channels", AGENT, expect=200, user_id="me")
call("GET", "/users/{user_id}/channels", AGENT, expect=403, user_id=walker["id"])
dm = call("POST", "/channels/direct", AGENT, expect=201, json_body=[me["id"], walker["id"]])
call("POST", "/channels/direct", AGENT, expect=400, json_body=[me["id"]])
group = call("POST", "/channels/group", AGENT, expect=201, json_body=[walker["id"], admin["id"]])
call("POST", "/channels/group", AGENT, expect=400, json_body=[walker["id"]])
call(
    "POST",
    "/channels/{channel_id}/members",
    AGENT,
    expect=201,
    json_body={"user_id": walker["id"]},
    channel_id=chan["id"],
)
call(
    "POST",
    "/channels/{channel_id}/members",
    AGENT,
    expect=403,
    json_body={"user_id": me["id"]},
    channel_id=hr["id"],
)
call("GET", "/channels/{channel_id}/members", AGENT, expect=200, channel_id=chan["id"])
call("GET", "/channels/{channel_id}/members", AGENT, expect=403, channel_id=hr["id"])
call(
    "GET",
    "/channels/{channel_id}/members/{user_id}",
    AGENT,
    expect=200,
    channel_id=chan["id"],
    user_id=walker["id"],
)
call(
    "GET",
    "/channels/{channel_id}/members/{user_id}",
    AGENT,
    expect=404,
    channel_id=chan["id"],
    user_id=admin["id"],
)
call(
    "DELETE",
    "/channels/{channel_id}/members/{user_id}",
    AGENT,
    expect=200,
    channel_id=chan["id"],
    user_id=walker["id"],
)
call(
    "DELETE",
    "/channels/{channel_id}/members/{user_id}",
    AGENT,
    expect=400,
    channel_id=dm["id"],
    user_id=me["id"],
)
# posts, threads, search, reactions
root = call("POST", "/posts", AGENT, expect=201, json_body={"channel_id": chan["id"], "message": "walk root"})
reply = call(
    "POST",
    "/posts",
    AGENT,
    expect=201,
    json_body={"channel_id": chan["id"], "message": "walk reply", "root_id": root["id"]},
)
call(
    "POST",
    "/posts",
    AGENT,
    expect=400,
    json_body={"channel_id": chan["id"], "message": "x", "root_id": BAD_ID},
)
call("POST", "/posts", AGENT, expect=403, json_body={"channel_id": hr["id"], "message": "let me in"})
call("POST", "/posts", AGENT, expect=201, json_body={"channel_id": group["id"], "message": "hi group"})
call("GET", "/posts/{post_id}", AGENT, expect=200, post_id=reply["id"])
call("GET", "/posts/{post_id}", AGENT, expect=404, post_id=BAD_ID)
call("GET", "/posts/{post_id}/thread", AGENT, expect=200, post_id=reply["id"])
call("GET", "/posts/{post_id}/thread", AGENT, expect=200, post_id=root["id"], params={"perPage": 1})
threads = "/users/{user_id}/teams/{team_id}/threads"
call("GET", threads, AGENT, expect=200, user_id="me", team_id=chan["team_id"])
call("GET", threads, AGENT, expect=403, user_id=admin["id"], team_id=chan["team_id"])
call(
    "GET",
    threads + "/{thread_id}",
    AGENT,
    expect=200,
    user_id="me",
    team_id=chan["team_id"],
    thread_id=root["id"],
)
call(
    "GET",
    threads + "/{thread_id}",
    AGENT,
    expect=404,
    user_id="me",
    team_id=chan["team_id"],
    thread_id=BAD_ID,
)
call("GET", "/channels/{channel_id}/posts", AGENT, expect=200, channel_id=finance["id"])
unread = "/users/{user_id}/channels/{channel_id}/posts/unread"
around = {"limit_before": 5, "limit_after": 5}
call("GET", unread, AGENT, expect=200, user_id="me", channel_id=chan["id"], params=around)
call("GET", unread, AGENT, expect=403, user_id=walker["id"], channel_id=chan["id"], params=around)
call("GET", unread, AGENT, expect=400, user_id="me", channel_id=chan["id"], params={"limit_after": 0})
call("GET", "/channels/{channel_id}/stats", AGENT, expect=200, channel_id=chan["id"])
call(
    "GET",
    "/channels/{channel_id}/stats",
    AGENT,
    expect=200,
    channel_id=chan["id"],
    params={"exclude_files_count": "true"},
)
call("GET", "/channels/{channel_id}/stats", AGENT, expect=404, channel_id=BAD_ID)
call("GET", "/users/{user_id}/teams/members", AGENT, expect=200, user_id="me")
call("GET", "/users/{user_id}/teams/members", AGENT, expect=403, user_id=walker["id"])
members = "/users/{user_id}/teams/{team_id}/channels/members"
call("GET", members, AGENT, expect=200, user_id="me", team_id=acme["id"])
call("GET", members, AGENT, expect=403, user_id=walker["id"], team_id=acme["id"])
call(
    "GET",
    "/channels/{channel_id}/posts",
    AGENT,
    expect=200,
    channel_id=finance["id"],
    params={"collapsedThreads": "true", "per_page": 1},
)
older = call(
    "GET",
    "/channels/{channel_id}/posts",
    AGENT,
    expect=200,
    channel_id=chan["id"],
    params={"before": reply["id"]},
)
newer = call(
    "GET",
    "/channels/{channel_id}/posts",
    AGENT,
    expect=200,
    channel_id=chan["id"],
    params={"after": root["id"]},
)
if older["order"] != [root["id"]] or newer["order"] != [reply["id"]]:
    sys.exit(f"before/after paging wrong: {older['order']} {newer['order']}")
call("GET", "/channels/{channel_id}/posts", AGENT, expect=403, channel_id=hr["id"])
call(
    "POST",
    "/teams/{team_id}/posts/search",
    AGENT,
    expect=200,
    json_body={"terms": "accruals", "is_or_search": False},
    team_id=acme["id"],
)
call(
    "POST",
    "/teams/{team_id}/posts/search",
    AGENT,
    expect=400,
    json_body={"terms": "on:2024-99-99", "is_or_search": False},
    team_id=acme["id"],
)
call(
    "POST",
    "/reactions",
    AGENT,
    expect=201,
    json_body={"user_id": me["id"], "post_id": root["id"], "emoji_name": "thumbsup"},
)
call(
    "POST",
    "/reactions",
    AGENT,
    expect=403,
    json_body={"user_id": walker["id"], "post_id": root["id"], "emoji_name": "thumbsup"},
)
call("GET", "/posts/{post_id}/reactions", AGENT, expect=200, post_id=root["id"])
call("GET", "/posts/{post_id}/reactions", AGENT, expect=400, post_id="bad")
# files
up = call(
    "POST", "/files", AGENT, expect=201, data={"channel_id": chan["id"]}, files={"files": ("a.txt", b"hello")}
)
raw = call(
    "POST",
    "/files",
    AGENT,
    expect=201,
    params={"channel_id": chan["id"], "filename": "b.csv"},
    content=b"x,y",
)
call("POST", "/files", AGENT, expect=403, data={"channel_id": hr["id"]}, files={"files": ("c.txt", b"no")})
file_id = up["file_infos"][0]["id"]
with_file = call(
    "POST",
    "/posts",
    AGENT,
    expect=201,
    json_body={"channel_id": chan["id"], "message": "", "file_ids": [file_id, raw["file_infos"][0]["id"]]},
)
call("GET", "/files/{file_id}/info", AGENT, expect=200, file_id=file_id)
call("GET", "/files/{file_id}/info", AGENT, expect=404, file_id=BAD_ID)
call("GET", "/files/{file_id}", AGENT, expect=200, file_id=file_id)
call("GET", "/files/{file_id}", AGENT, expect=404, file_id=BAD_ID)
for kind in ("thumbnail", "preview"):  # a text file has neither
    call("GET", "/files/{file_id}/" + kind, AGENT, expect=400, file_id=file_id)
    call("GET", "/files/{file_id}/" + kind, AGENT, expect=404, file_id=BAD_ID)
call("GET", "/files/{file_id}/link", AGENT, expect=403, file_id=file_id)  # public links are off
call("GET", "/posts/{post_id}/files/info", AGENT, expect=200, post_id=with_file["id"])
call("GET", "/posts/{post_id}/files/info", AGENT, expect=404, post_id=BAD_ID)
# edits, pins, statuses, views, logout, client config: what integrations use beyond the MCP server
call(
    "PUT",
    "/posts/{post_id}",
    AGENT,
    expect=200,
    json_body={"id": reply["id"], "message": "walk reply, edited"},
    post_id=reply["id"],
)
call("PUT", "/posts/{post_id}", AGENT, expect=400, json_body={"id": root["id"]}, post_id=reply["id"])
call("PUT", "/posts/{post_id}/patch", AGENT, expect=200, json_body={"message": "patched"}, post_id=root["id"])
call("PUT", "/posts/{post_id}/patch", AGENT, expect=404, json_body={"message": "x"}, post_id=BAD_ID)
call("POST", "/posts/{post_id}/pin", AGENT, expect=200, post_id=root["id"])
call("POST", "/posts/{post_id}/pin", AGENT, expect=404, post_id=BAD_ID)
call("GET", "/channels/{channel_id}/pinned", AGENT, expect=200, channel_id=chan["id"])
call("GET", "/channels/{channel_id}/pinned", AGENT, expect=403, channel_id=hr["id"])
call("POST", "/posts/{post_id}/unpin", AGENT, expect=200, post_id=root["id"])
call("POST", "/posts/ids", AGENT, expect=200, json_body=[root["id"], reply["id"]])
call("POST", "/posts/ids", AGENT, expect=400, json_body={"not": "a list"})
call("POST", "/posts/search", AGENT, expect=200, json_body={"terms": "walk", "is_or_search": False})
reaction = {"post_id": root["id"], "emoji_name": "thumbsup"}
call(
    "DELETE",
    "/users/{user_id}/posts/{post_id}/reactions/{emoji_name}",
    AGENT,
    expect=200,
    user_id="me",
    **reaction,
)
call(
    "DELETE",
    "/users/{user_id}/posts/{post_id}/reactions/{emoji_name}",
    AGENT,
    expect=403,
    user_id=walker["id"],
    **reaction,
)
call("GET", "/users/autocomplete", AGENT, expect=200, params={"in_team": acme["id"], "name": "ra"})
call(
    "GET",
    "/users/autocomplete",
    AGENT,
    expect=200,
    params={"in_team": acme["id"], "in_channel": chan["id"], "name": "w"},
)
call("GET", "/users/autocomplete", AGENT, expect=400, params={"in_team": "bad"})
view = {"channel_id": chan["id"]}
call("POST", "/channels/members/{user_id}/view", AGENT, expect=200, json_body=view, user_id="me")
call("POST", "/channels/members/{user_id}/view", AGENT, expect=403, json_body=view, user_id=walker["id"])
call("GET", "/users/{user_id}/status", AGENT, expect=200, user_id="me")
away = {"user_id": me["id"], "status": "away"}
call("PUT", "/users/{user_id}/status", AGENT, expect=200, json_body=away, user_id=me["id"])
call(
    "PUT",
    "/users/{user_id}/status",
    AGENT,
    expect=400,
    json_body=away | {"status": "asleep"},
    user_id=me["id"],
)
call("POST", "/users/status/ids", AGENT, expect=200, json_body=[me["id"], walker["id"]])
call("GET", "/config/client", None, expect=200, params={"format": "old"})
call("DELETE", "/posts/{post_id}", AGENT, expect=200, post_id=reply["id"])
call("DELETE", "/posts/{post_id}", AGENT, expect=404, post_id=reply["id"])
session = http.post(BASE + "/users/login", json={"login_id": "walker", "password": "walker-password"})
call("POST", "/users/logout", session.headers["Token"], expect=200)
call("POST", "/users/logout", session.headers["Token"], expect=401)
