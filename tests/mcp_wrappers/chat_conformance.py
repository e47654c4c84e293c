"""Conformance checks of a Mattermost API v4 server, run INSIDE a sandbox (the host cannot reach it).

Uses the official Python driver `mattermostautodriver` (put on PYTHONPATH by the test) and raw
HTTP (httpx). Each check is a function that raises on a difference from Mattermost's behaviour;
the script prints one JSON object {check name: "pass" | "fail: why"}. Checks share fresh users
and a fresh channel made here, so the chat files loaded at start only provide the team.
Driven by test_chat_conformance.py against real Mattermost and against our service.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import struct
import sys
import time
import traceback
import zlib
from collections.abc import Callable
from pathlib import Path

import aiohttp  # the driver's own WebSocket client (mattermostautodriver.Websocket) uses it
import httpx
from mattermostautodriver import TypedDriver
from mattermostautodriver.exceptions import NotEnoughPermissions, ResourceNotFound

HOST, PORT = "127.0.0.1", 8065
API = f"http://{HOST}:{PORT}/api/v4"
ADMIN_TOKEN = Path("/egym/secrets/chat-admin-token").read_text().strip()
http = httpx.Client(base_url=API, timeout=30)
CHECKS: list[tuple[str, Callable[[], None]]] = []


def check(fn: Callable[[], None]) -> Callable[[], None]:
    CHECKS.append((fn.__name__, fn))
    return fn


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def call(method: str, path: str, token: str | None = None, **kw) -> httpx.Response:
    return http.request(method, path, headers=auth(token) if token else {}, **kw)


def ok(response: httpx.Response, status: int = 200):
    assert response.status_code == status, (
        f"{response.request.method} {response.request.url.path}: "
        f"{response.status_code} {response.text[:200]} (wanted {status})"
    )
    return response.json()


def error_body(response: httpx.Response, status: int) -> dict:
    """Mattermost's error body: id, message, status_code (and detailed_error, request_id but for no route)."""
    assert response.status_code == status, f"{response.status_code} {response.text[:200]} (wanted {status})"
    body = response.json()
    assert isinstance(body, dict) and body.get("status_code") == status, body
    assert body.get("id") and body.get("message") and "detailed_error" in body, body
    return body


def driver(**options) -> TypedDriver:
    base = {"scheme": "http", "url": HOST, "port": PORT, "verify": False, "max_retries": 0}
    return TypedDriver(base | options)


# -- fixtures: three fresh users in the loaded team, a public channel of theirs ----------------

admin = driver(token=ADMIN_TOKEN)
admin.login()
TEAM = admin.teams.get_all_teams()[0]
SUFFIX = secrets.token_hex(3)
PASSWORD = "Pw-" + secrets.token_urlsafe(12)
USERS = []
for n in range(3):
    name = f"conf{n}{SUFFIX}"
    user = ok(
        call(
            "POST",
            "/users",
            ADMIN_TOKEN,
            json={
                "username": name,
                "email": f"{name}@example.com",
                "password": PASSWORD,
                "first_name": f"Conf{n}",
                "last_name": "Tester",
            },
        ),
        201,
    )
    ok(
        call(
            "POST",
            f"/teams/{TEAM['id']}/members",
            ADMIN_TOKEN,
            json={"team_id": TEAM["id"], "user_id": user["id"]},
        ),
        201,
    )
    USERS.append(user)
U1, U2, U3 = USERS
d1 = driver(login_id=U1["username"], password=PASSWORD)
d1.login()
T1 = d1.client.token
T2 = http.post("/users/login", json={"login_id": U2["username"], "password": PASSWORD}).headers["Token"]
T3 = http.post("/users/login", json={"login_id": U3["username"], "password": PASSWORD}).headers["Token"]
CHANNEL = d1.channels.create_channel(
    team_id=TEAM["id"], name=f"conf-{SUFFIX}", display_name="Conformance", type="O"
)
ok(call("POST", f"/channels/{CHANNEL['id']}/members", T1, json={"user_id": U2["id"]}), 201)


def fresh_channel(token: str = "", kind: str = "O") -> dict:
    name = f"c-{secrets.token_hex(4)}"
    body = {"team_id": TEAM["id"], "name": name, "display_name": name, "type": kind}
    return ok(call("POST", "/channels", token or T1, json=body), 201)


def user_posts(channel_id: str, token: str = "", **params) -> list[dict]:
    """Posts of a channel page, newest first, without the server's own (system_*) posts."""
    page = ok(call("GET", f"/channels/{channel_id}/posts", token or T1, params=params))
    return [page["posts"][i] for i in page["order"] if not page["posts"][i]["type"].startswith("system_")]


def post(channel_id: str, message: str, token: str = "", **extra) -> dict:
    return ok(
        call("POST", "/posts", token or T1, json={"channel_id": channel_id, "message": message} | extra), 201
    )


# -- login, sessions, tokens ------------------------------------------------------------------


@check
def login_password_answers_200_with_token_header():
    response = http.post("/users/login", json={"login_id": U1["username"], "password": PASSWORD})
    body = ok(response, 200)
    assert body["id"] == U1["id"] and response.headers.get("Token"), response.headers


@check
def driver_login_with_password_then_reads_me():
    assert d1.client.token and d1.client.userid == U1["id"]
    assert d1.users.get_user("me")["username"] == U1["username"]


@check
def driver_login_with_personal_access_token():
    # Mattermost answers 200 (its OpenAPI documentation says 201)
    pat = ok(call("POST", f"/users/{U3['id']}/tokens", ADMIN_TOKEN, json={"description": "conformance"}), 200)
    d = driver(token=pat["token"])
    assert d.login()["id"] == U3["id"]


@check
def wrong_password_is_401_with_error_body():
    error_body(
        http.post("/users/login", json={"login_id": U1["username"], "password": "wrong-password"}), 401
    )


@check
def no_token_is_401_with_error_body():
    error_body(http.get("/users/me"), 401)


@check
def access_token_query_parameter_is_refused_for_non_oauth_tokens():
    """Mattermost takes `?access_token=` from OAuth apps only: a session or personal token there is 401."""
    pat = ok(call("POST", f"/users/{U1['id']}/tokens", ADMIN_TOKEN, json={"description": "query"}), 200)
    for token in (pat["token"], T1):
        error_body(http.get("/users/me", params={"access_token": token}), 401)


@check
def logout_ends_the_session():
    token = http.post("/users/login", json={"login_id": U3["username"], "password": PASSWORD}).headers[
        "Token"
    ]
    assert ok(call("POST", "/users/logout", token))["status"] == "OK"
    error_body(call("GET", "/users/me", token), 401)


@check
def version_header_on_answers():
    assert http.get("/system/ping").headers.get("X-Version-Id")
    assert call("GET", "/users/me", T1).headers.get("X-Version-Id")


@check
def config_client_old_format():
    config = ok(http.get("/config/client", params={"format": "old"}))
    assert isinstance(config, dict) and config.get("Version") and "SiteName" in config, list(config)[:20]


# -- posts ------------------------------------------------------------------------------------


@check
def driver_create_and_get_post():
    created = d1.posts.create_post(channel_id=CHANNEL["id"], message="hello conformance")
    got = d1.posts.get_post(created["id"])
    assert got["message"] == "hello conformance" and got["user_id"] == U1["id"]
    assert got["channel_id"] == CHANNEL["id"] and got["create_at"] > 0 and got["edit_at"] == 0


@check
def posts_by_ids():
    a, b = post(CHANNEL["id"], "by ids a"), post(CHANNEL["id"], "by ids b")
    got = ok(call("POST", "/posts/ids", T1, json=[a["id"], b["id"]]))
    assert sorted(p["id"] for p in got) == sorted([a["id"], b["id"]])


@check
def edit_post_with_put():
    created = post(CHANNEL["id"], "to be edited")
    updated = d1.posts.update_post(created["id"], id=created["id"], message="edited with PUT")
    assert updated["message"] == "edited with PUT" and updated["edit_at"] > 0
    assert d1.posts.get_post(created["id"])["message"] == "edited with PUT"


@check
def patch_post():
    created = post(CHANNEL["id"], "to be patched")
    patched = ok(call("PUT", f"/posts/{created['id']}/patch", T1, json={"message": "patched"}))
    assert patched["message"] == "patched" and patched["edit_at"] > 0 and patched["id"] == created["id"]


@check
def editing_someone_elses_post_is_403():
    created = post(CHANNEL["id"], "mine, not yours")
    error_body(call("PUT", f"/posts/{created['id']}/patch", T2, json={"message": "hijacked"}), 403)


@check
def pin_and_unpin_post():
    created = post(CHANNEL["id"], "pin me")
    assert ok(call("POST", f"/posts/{created['id']}/pin", T1))["status"] == "OK"
    assert d1.posts.get_post(created["id"])["is_pinned"] is True
    pinned = ok(call("GET", f"/channels/{CHANNEL['id']}/pinned", T1))
    assert created["id"] in pinned["order"]
    assert ok(call("POST", f"/posts/{created['id']}/unpin", T1))["status"] == "OK"
    assert d1.posts.get_post(created["id"])["is_pinned"] is False


@check
def delete_post():
    created = post(CHANNEL["id"], "delete me")
    assert ok(call("DELETE", f"/posts/{created['id']}", T1))["status"] == "OK"
    try:
        d1.posts.get_post(created["id"])
        raise AssertionError("a deleted post is still served")
    except ResourceNotFound:
        pass
    assert created["id"] not in [p["id"] for p in user_posts(CHANNEL["id"])]


@check
def deleting_someone_elses_post_is_403():
    created = post(CHANNEL["id"], "not yours to delete")
    try:
        as_u2 = driver(token=T2)
        as_u2.login()
        as_u2.posts.delete_post(created["id"])
        raise AssertionError("deleted another user's post")
    except NotEnoughPermissions:
        pass


@check
def thread_holds_root_and_replies():
    root = post(CHANNEL["id"], "thread root")
    r1 = post(CHANNEL["id"], "reply one", root_id=root["id"])
    r2 = post(CHANNEL["id"], "reply two", T2, root_id=root["id"])
    thread = d1.posts.get_post_thread(r1["id"])
    assert set(thread["order"]) == {root["id"], r1["id"], r2["id"]}, thread["order"]
    assert thread["posts"][r2["id"]]["root_id"] == root["id"]
    assert d1.posts.get_post(root["id"])["reply_count"] == 2


@check
def reply_to_a_post_of_another_channel_is_400():
    root = post(CHANNEL["id"], "root elsewhere")
    other = fresh_channel()
    error_body(
        call("POST", "/posts", T1, json={"channel_id": other["id"], "message": "x", "root_id": root["id"]}),
        400,
    )


# -- paging -----------------------------------------------------------------------------------

PAGED = fresh_channel()
for n in range(7):
    post(PAGED["id"], f"paged {n}")
    time.sleep(0.003)  # distinct create_at


@check
def page_and_per_page():
    everything = user_posts(PAGED["id"], per_page=200)
    assert [p["message"] for p in everything] == [f"paged {n}" for n in range(6, -1, -1)]
    full = ok(call("GET", f"/channels/{PAGED['id']}/posts", T1, params={"per_page": 200}))["order"]
    pages = [
        ok(call("GET", f"/channels/{PAGED['id']}/posts", T1, params={"page": k, "per_page": 3}))["order"]
        for k in range(3)
    ]
    assert pages == [full[0:3], full[3:6], full[6:9]], (pages, full)


@check
def since_lists_posts_changed_after_a_time():
    everything = user_posts(PAGED["id"], per_page=200)
    cut = everything[2]["create_at"]  # "paged 4"
    since = ok(call("GET", f"/channels/{PAGED['id']}/posts", T1, params={"since": cut}))
    messages = {since["posts"][i]["message"] for i in since["order"]}
    assert {"paged 5", "paged 6"} <= messages and not messages & {
        "paged 0",
        "paged 1",
        "paged 2",
        "paged 3",
    }, messages


@check
def before_and_after_a_post():
    everything = user_posts(PAGED["id"], per_page=200)
    middle = everything[3]  # "paged 3"
    before = user_posts(PAGED["id"], before=middle["id"], per_page=2)
    after = user_posts(PAGED["id"], after=middle["id"], per_page=2)
    assert [p["message"] for p in before] == ["paged 2", "paged 1"], before
    assert [p["message"] for p in after] == ["paged 5", "paged 4"], after


@check
def negative_page_or_per_page_answers_like_the_defaults():
    """Mattermost does not refuse page=-1 / per_page=-5: it reads them as page 0 / the default size."""
    first = ok(call("GET", "/users", T1, params={"page": 0, "in_team": TEAM["id"]}))
    assert ok(call("GET", "/users", T1, params={"page": -1, "in_team": TEAM["id"]})) == first
    assert ok(call("GET", "/users", T1, params={"per_page": -5, "in_team": TEAM["id"]})) == first
    newest = ok(call("GET", f"/channels/{PAGED['id']}/posts", T1, params={"page": 0}))["order"]
    assert ok(call("GET", f"/channels/{PAGED['id']}/posts", T1, params={"page": -1}))["order"] == newest


@check
def per_page_over_the_maximum_is_capped():
    assert isinstance(ok(call("GET", "/users", T1, params={"per_page": 1000})), list)


# -- search -----------------------------------------------------------------------------------

WORD = f"zebra{SUFFIX}"
SEARCHED = post(CHANNEL["id"], f"the {WORD} crossed the road")


@check
def search_posts_in_a_team():
    found = d1.posts.search_posts(TEAM["id"], terms=WORD, is_or_search=False)
    assert SEARCHED["id"] in found["order"], found["order"]


@check
def search_posts_across_all_teams():
    found = ok(call("POST", "/posts/search", T1, json={"terms": WORD, "is_or_search": False}))
    assert SEARCHED["id"] in found["order"], found["order"]


@check
def search_does_not_show_channels_you_cannot_read():
    found = ok(
        call("POST", f"/teams/{TEAM['id']}/posts/search", T3, json={"terms": WORD, "is_or_search": False})
    )
    assert SEARCHED["id"] not in found["order"]


# -- reactions --------------------------------------------------------------------------------


@check
def reactions_add_list_remove():
    target = post(CHANNEL["id"], "react to me")
    added = d1.reactions.save_reaction({"user_id": U1["id"], "post_id": target["id"], "emoji_name": "tada"})
    assert added["emoji_name"] == "tada" and added["user_id"] == U1["id"]
    listed = ok(call("GET", f"/posts/{target['id']}/reactions", T1))
    assert [(r["user_id"], r["emoji_name"]) for r in listed] == [(U1["id"], "tada")]
    removed = call("DELETE", f"/users/{U1['id']}/posts/{target['id']}/reactions/tada", T1)
    assert ok(removed)["status"] == "OK"
    assert not ok(call("GET", f"/posts/{target['id']}/reactions", T1))  # [] (or null)


@check
def reacting_for_another_user_is_403():
    target = post(CHANNEL["id"], "react for someone else")
    error_body(
        call(
            "POST",
            "/reactions",
            T1,
            json={"user_id": U2["id"], "post_id": target["id"], "emoji_name": "eyes"},
        ),
        403,
    )


# -- users ------------------------------------------------------------------------------------


@check
def users_by_ids_and_usernames():
    by_ids = d1.users.get_users_by_ids([U2["id"], U3["id"]])
    assert sorted(u["id"] for u in by_ids) == sorted([U2["id"], U3["id"]])
    by_names = ok(call("POST", "/users/usernames", T1, json=[U2["username"]]))
    assert [u["id"] for u in by_names] == [U2["id"]]


@check
def users_autocomplete():
    found = ok(
        call("GET", "/users/autocomplete", T1, params={"in_team": TEAM["id"], "name": f"conf1{SUFFIX}"})
    )
    assert [u["id"] for u in found["users"]] == [U2["id"]], found


@check
def users_autocomplete_in_channel():
    found = ok(
        call(
            "GET",
            "/users/autocomplete",
            T1,
            params={"in_team": TEAM["id"], "in_channel": CHANNEL["id"], "name": "conf"},
        )
    )
    assert {u["id"] for u in found["users"]} >= {U1["id"], U2["id"]}, found
    assert U3["id"] in {u["id"] for u in found.get("out_of_channel") or []}, found


@check
def users_search():
    found = d1.users.search_users(term=f"conf2{SUFFIX}", team_id=TEAM["id"])
    assert [u["id"] for u in found] == [U3["id"]]


@check
def user_by_username():
    assert ok(call("GET", f"/users/username/{U2['username']}", T1))["id"] == U2["id"]


# -- channels, members, views, status ---------------------------------------------------------


@check
def channel_members_and_members_me():
    members = ok(call("GET", f"/channels/{CHANNEL['id']}/members", T1))
    assert {m["user_id"] for m in members} >= {U1["id"], U2["id"]}
    me = ok(call("GET", f"/channels/{CHANNEL['id']}/members/me", T2))
    assert me["user_id"] == U2["id"] and me["channel_id"] == CHANNEL["id"]


@check
def non_member_cannot_add_others_to_a_public_channel_but_can_join():
    channel = fresh_channel(T1)
    error_body(call("POST", f"/channels/{channel['id']}/members", T2, json={"user_id": U3["id"]}), 403)
    ok(call("POST", f"/channels/{channel['id']}/members", T2, json={"user_id": U2["id"]}), 201)
    ok(call("POST", f"/channels/{channel['id']}/members", T2, json={"user_id": U3["id"]}), 201)


@check
def private_channel_is_hidden_from_non_members():
    secret = fresh_channel(T1, "P")
    error_body(call("GET", f"/channels/{secret['id']}", T3), 403)
    error_body(call("GET", f"/channels/{secret['id']}/posts", T3), 403)
    error_body(call("POST", "/posts", T3, json={"channel_id": secret["id"], "message": "let me in"}), 403)


@check
def view_channel():
    viewed = ok(call("POST", "/channels/members/me/view", T2, json={"channel_id": CHANNEL["id"]}))
    assert viewed["status"] == "OK" and "last_viewed_at_times" in viewed, viewed


@check
def user_status_get_set_and_by_ids():
    status = ok(call("GET", "/users/me/status", T2))
    assert status["user_id"] == U2["id"] and status["status"] in ("online", "away", "offline", "dnd")
    changed = ok(call("PUT", f"/users/{U2['id']}/status", T2, json={"user_id": U2["id"], "status": "dnd"}))
    assert changed["status"] == "dnd"
    statuses = ok(call("POST", "/users/status/ids", T1, json=[U2["id"]]))
    assert [(s["user_id"], s["status"]) for s in statuses] == [(U2["id"], "dnd")]


@check
def direct_message_channel():
    dm = d1.channels.create_direct_channel([U1["id"], U2["id"]])
    assert dm["type"] == "D" and dm["name"] == "__".join(sorted([U1["id"], U2["id"]]))
    again = ok(call("POST", "/channels/direct", T2, json=[U2["id"], U1["id"]]), 201)
    assert again["id"] == dm["id"]
    sent = post(dm["id"], "just between us")
    assert sent["id"] in [p["id"] for p in user_posts(dm["id"], T2)]
    error_body(call("GET", f"/channels/{dm['id']}/posts", T3), 403)


@check
def group_message_channel():
    group = ok(call("POST", "/channels/group", T1, json=[U1["id"], U2["id"], U3["id"]]), 201)
    assert group["type"] == "G"
    members = {m["user_id"] for m in ok(call("GET", f"/channels/{group['id']}/members", T3))}
    assert members == {U1["id"], U2["id"], U3["id"]}


@check
def my_channels_in_team():
    mine = ok(call("GET", f"/users/me/teams/{TEAM['id']}/channels", T2))
    assert CHANNEL["id"] in {c["id"] for c in mine}


# -- threads (collapsed threads on) and thread paging -----------------------------------------

THREAD_ROOT = post(CHANNEL["id"], "followed thread root")
THREAD_REPLIES = []
for n in range(5):
    THREAD_REPLIES.append(
        post(CHANNEL["id"], f"followed reply {n}", T2 if n % 2 else T1, root_id=THREAD_ROOT["id"])
    )
    time.sleep(0.003)  # distinct create_at


@check
def user_threads_lists_the_threads_a_user_wrote_in():
    mine = ok(call("GET", f"/users/{U2['id']}/teams/{TEAM['id']}/threads", T2))
    assert mine["total"] >= 1 and "total_unread_threads" in mine, {k: mine[k] for k in mine if k != "threads"}
    thread = next(t for t in mine["threads"] if t["id"] == THREAD_ROOT["id"])
    assert thread["reply_count"] == 5 and thread["post"]["id"] == THREAD_ROOT["id"], thread
    assert thread["last_reply_at"] == THREAD_REPLIES[-1]["create_at"], thread
    assert {p["id"] for p in thread["participants"]} == {U1["id"], U2["id"]}, thread["participants"]
    outsider = ok(call("GET", f"/users/me/teams/{TEAM['id']}/threads", T3))
    assert THREAD_ROOT["id"] not in {t["id"] for t in outsider["threads"]}
    totals = ok(call("GET", f"/users/me/teams/{TEAM['id']}/threads", T1, params={"totalsOnly": "true"}))
    assert not totals["threads"] and totals["total"] >= 1, totals


@check
def user_thread_by_id_and_others_threads_are_403():
    one = ok(call("GET", f"/users/me/teams/{TEAM['id']}/threads/{THREAD_ROOT['id']}", T1))
    assert one["id"] == THREAD_ROOT["id"] and one["reply_count"] == 5, one
    error_body(call("GET", f"/users/{U2['id']}/teams/{TEAM['id']}/threads", T1), 403)


@check
def thread_pages_from_a_post_in_both_directions():
    """perPage replies after (down) or before (up) fromPost, with the root always there."""
    root, r = THREAD_ROOT["id"], [p["id"] for p in THREAD_REPLIES]

    def page(**params) -> dict:
        return ok(call("GET", f"/posts/{root}/thread", T1, params={"perPage": 2} | params))

    down = page(fromPost=r[1], fromCreateAt=THREAD_REPLIES[1]["create_at"], direction="down")
    assert set(down["order"]) == {root, r[2], r[3]} and down["has_next"] is True, down["order"]
    up = page(fromPost=r[3], fromCreateAt=THREAD_REPLIES[3]["create_at"], direction="up")
    assert set(up["order"]) == {root, r[2], r[1]} and up["has_next"] is True, up["order"]
    last = page(fromPost=r[3], fromCreateAt=THREAD_REPLIES[3]["create_at"], direction="down")
    assert set(last["order"]) == {root, r[4]} and last["has_next"] is False, last["order"]
    everything = ok(call("GET", f"/posts/{root}/thread", T1))
    assert set(everything["order"]) == {root, *r}


# -- files: public link, thumbnail, preview ----------------------------------------------------


def png(width: int = 64, height: int = 48) -> bytes:
    """A small RGB PNG, made by hand (no image library in the sandbox)."""
    rows = b"".join(
        b"\x00" + b"".join(bytes([x * 4 % 256, y * 5 % 256, 100]) for x in range(width))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def upload(name: str, data: bytes, mime: str) -> dict:
    files = {"files": (name, data, mime)}
    return ok(call("POST", "/files", T1, files=files, data={"channel_id": CHANNEL["id"]}), 201)["file_infos"][
        0
    ]


@check
def public_file_links_are_disabled():
    """FileSettings.EnablePublicLink is off by default: 403, whatever the file (even an unknown one)."""
    info = upload("linked.txt", b"link me", "text/plain")
    for file_id in (info["id"], "q" * 26):
        body = error_body(call("GET", f"/files/{file_id}/link", T1), 403)
        assert body["id"] == "api.file.get_public_link.disabled.app_error", body


@check
def image_thumbnail_and_preview():
    info = upload("picture.png", png(), "image/png")
    assert info["has_preview_image"] is True and info["mime_type"] == "image/png", info
    for kind in ("thumbnail", "preview"):
        response = call("GET", f"/files/{info['id']}/{kind}", T1)
        assert response.status_code == 200 and response.headers["content-type"].startswith("image/"), kind
        assert response.content[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0", b"\xff\xd8\xff\xdb"), (
            response.content[:8]
        )


@check
def thumbnail_of_a_non_image_is_400_and_of_an_unknown_file_404():
    info = upload("notes.txt", b"no pixels here", "text/plain")
    assert not info.get("has_preview_image"), info  # Mattermost leaves it out when false
    for kind in ("thumbnail", "preview"):
        body = error_body(call("GET", f"/files/{info['id']}/{kind}", T1), 400)
        assert body["id"] == f"api.file.get_file_{kind}.no_{kind}.app_error", body
        error_body(call("GET", f"/files/{'q' * 26}/{kind}", T1), 404)


# -- WebSocket event stream -------------------------------------------------------------------

WS_URL = f"ws://{HOST}:{PORT}/api/v4/websocket"
CLOSED = (
    aiohttp.WSMsgType.CLOSE,
    aiohttp.WSMsgType.CLOSING,
    aiohttp.WSMsgType.CLOSED,
    aiohttp.WSMsgType.ERROR,
)


async def frames(ws, until: Callable[[dict], bool], timeout: float = 5.0) -> list[dict]:
    """Frames read until one satisfies `until` (AssertionError after `timeout` seconds or a close)."""
    seen: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no such frame in {timeout} s; got {seen}")
        try:
            message = await ws.receive(timeout=left)
        except TimeoutError:
            continue
        if message.type in CLOSED:
            raise AssertionError(f"closed ({message.type}); got {seen}")
        seen.append(json.loads(message.data))
        if until(seen[-1]):
            return seen


async def authenticated(session, token: str):
    ws = await session.ws_connect(WS_URL)
    await ws.send_str(json.dumps({"seq": 1, "action": "authentication_challenge", "data": {"token": token}}))
    seen = await frames(ws, lambda f: f.get("seq_reply") == 1)
    seen += (
        []
        if any(f.get("event") == "hello" for f in seen)
        else await frames(ws, lambda f: f.get("event") == "hello")
    )
    return ws, seen


def ws_check(fn: Callable[[aiohttp.ClientSession], object]) -> Callable[[], None]:
    async def run() -> None:
        async with aiohttp.ClientSession() as session:
            await fn(session)

    def sync() -> None:
        asyncio.run(run())

    sync.__name__ = fn.__name__
    return check(sync)


@ws_check
async def websocket_authentication_challenge_then_hello(session):
    ws, seen = await authenticated(session, T2)
    hello = next(f for f in seen if f.get("event") == "hello")
    assert hello["seq"] == 0 and hello["broadcast"]["user_id"] == U2["id"], hello
    assert hello["data"]["server_version"] and hello["data"]["connection_id"], hello
    assert {"status": "OK", "seq_reply": 1} in seen, seen
    await ws.send_str(json.dumps({"seq": 2, "action": "user_typing", "data": {"channel_id": CHANNEL["id"]}}))
    reply = (await frames(ws, lambda f: f.get("seq_reply") == 2))[-1]
    assert reply["status"] == "OK", reply
    await ws.close()


@ws_check
async def websocket_token_in_the_authorization_header(session):
    ws = await session.ws_connect(WS_URL, headers={"Authorization": f"Bearer {T2}"})
    hello = (await frames(ws, lambda f: f.get("event") == "hello"))[-1]
    assert hello["seq"] == 0 and hello["broadcast"]["user_id"] == U2["id"], hello
    await ws.close()


@ws_check
async def websocket_bad_token_gets_no_hello(session):
    ws = await session.ws_connect(WS_URL)
    await ws.send_str(
        json.dumps({"seq": 1, "action": "authentication_challenge", "data": {"token": "q" * 26}})
    )
    message = await ws.receive(timeout=10)
    assert message.type in CLOSED, (message.type, message.data)


@ws_check
async def websocket_posted_event_reaches_channel_members_only(session):
    member, _ = await authenticated(session, T2)
    outsider, _ = await authenticated(session, T3)
    created = await asyncio.to_thread(post, CHANNEL["id"], "heard over the websocket")
    seen = await frames(member, lambda f: f.get("event") == "posted")
    event = seen[-1]
    sent = json.loads(event["data"]["post"])  # the post as a JSON string, as Mattermost sends it
    assert sent["id"] == created["id"] and sent["message"] == "heard over the websocket", sent
    assert event["broadcast"]["channel_id"] == CHANNEL["id"] and event["data"]["channel_type"] == "O", event
    assert event["data"]["sender_name"] == "@" + U1["username"], event["data"]
    seqs = [f["seq"] for f in seen if "event" in f]
    assert seqs == sorted(seqs) and event["seq"] > 0, seqs
    try:
        heard = await frames(outsider, lambda f: f.get("event") == "posted", timeout=1.0)
        raise AssertionError(f"a non-member got the post: {heard}")
    except AssertionError as exc:
        if "non-member" in str(exc):
            raise
    await member.close()
    await outsider.close()


@ws_check
async def websocket_post_edited_and_deleted_events(session):
    member, _ = await authenticated(session, T2)
    created = await asyncio.to_thread(post, CHANNEL["id"], "soon edited")
    await frames(member, lambda f: f.get("event") == "posted")
    await asyncio.to_thread(call, "PUT", f"/posts/{created['id']}/patch", T1, json={"message": "now edited"})
    edited = (await frames(member, lambda f: f.get("event") == "post_edited"))[-1]
    assert json.loads(edited["data"]["post"])["message"] == "now edited", edited
    assert edited["broadcast"]["channel_id"] == CHANNEL["id"], edited
    await asyncio.to_thread(call, "DELETE", f"/posts/{created['id']}", T1)
    deleted = (await frames(member, lambda f: f.get("event") == "post_deleted"))[-1]
    assert json.loads(deleted["data"]["post"])["id"] == created["id"], deleted
    await member.close()


# -- bad input --------------------------------------------------------------------------------


@check
def malformed_id_is_400():
    error_body(call("GET", "/posts/abc", T1), 400)
    error_body(call("GET", "/channels/abc/posts", T1), 400)
    error_body(call("GET", "/users/abc", T1), 400)


@check
def unknown_post_is_404():
    error_body(call("GET", f"/posts/{'q' * 26}", T1), 404)


@check
def malformed_json_is_400():
    bad = {"Authorization": f"Bearer {T1}", "Content-Type": "application/json"}
    error_body(http.post("/posts", content="{not json", headers=bad), 400)
    error_body(http.post("/users/ids", content="[1,", headers=bad), 400)


@check
def message_over_the_limit_is_400():
    error_body(call("POST", "/posts", T1, json={"channel_id": CHANNEL["id"], "message": "x" * 16384}), 400)


@check
def oversized_body_is_refused_with_error_body():
    body = {"channel_id": CHANNEL["id"], "message": "x", "props": {"pad": "y" * (70 << 20)}}
    response = call("POST", "/posts", T1, json=body)
    assert response.status_code in (400, 413), response.status_code
    error_body(response, response.status_code)


@check
def unknown_route_is_404_with_error_body():
    error_body(call("GET", "/no/such/route", T1), 404)


def main() -> None:
    results = {}
    for name, fn in CHECKS:
        try:
            fn()
            results[name] = "pass"
        except Exception as exc:  # noqa: BLE001 - every failure is a result
            where = traceback.extract_tb(exc.__traceback__)[-1]
            results[name] = f"fail: {type(exc).__name__}: {str(exc)[:400]} (line {where.lineno})"
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
