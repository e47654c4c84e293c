"""Loading chat files through the API (the world's, then a task's), the grader snapshot, the secrets
the loader leaves behind, and the start/stop scripts."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from mcp_wrappers import PYTHON
from mcp_wrappers.chat.chatfile import ChatFile, SeedReply, dm_usernames
from tests.mcp_wrappers.chat_support import DATA, chat_snapshot


def ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


# -- the chat file format (no container) ---------------------------------------------


def test_seed_format_is_strict_and_times_are_utc():
    with pytest.raises(ValidationError, match="memebers"):
        ChatFile.model_validate({"channels": [{"name": "x", "memebers": ["a"]}]})
    naive = SeedReply(user="a", message="m", create_at=dt.datetime(2024, 3, 4, 9, 15))
    assert (
        naive.millis()
        == ms("2024-03-04T09:15:00Z")
        == SeedReply(user="a", message="m", create_at=ms("2024-03-04T09:15:00Z")).millis()
    )
    assert (
        dm_usernames("dm:raj.patel, @dana.lee") == ["dana.lee", "raj.patel"]
        and dm_usernames("finance") is None
    )


def test_example_seeds_validate():
    from mcp_wrappers.chat.chatfile import load_chat_file

    for name in ("chat_world.yaml", "chat_task.yaml"):
        assert load_chat_file(DATA / name).model_dump()


# -- loaded into a real chat service ----------------------------------------------


@pytest.fixture(scope="module")
def chat_state0(chat_sandbox) -> dict:
    return chat_snapshot(chat_sandbox)


@pytest.mark.docker
def test_snapshot_has_the_documented_shape(chat_state0):
    assert set(chat_state0) == {"users", "channels", "posts"}
    assert all(
        set(u) == {"id", "username", "first_name", "last_name", "email", "position"}
        for u in chat_state0["users"]
    )
    assert all(
        set(c) == {"id", "name", "display_name", "type", "header", "purpose", "members"}
        for c in chat_state0["channels"]
    )
    assert all(
        set(p) == {"id", "channel", "user", "message", "root_id", "create_at", "reactions", "files"}
        for p in chat_state0["posts"]
    )
    stamps = [(p["create_at"], p["id"]) for p in chat_state0["posts"]]
    assert stamps == sorted(stamps)


@pytest.mark.docker
def test_world_seed_then_task_overlay(chat_state0):
    users = {u["username"]: u for u in chat_state0["users"]}
    assert (
        users["raj.patel"]["position"] == "Controller" and "lena.kim" in users
    )  # lena comes from the overlay
    channels = {c["name"]: c for c in chat_state0["channels"]}
    assert channels["finance"]["type"] == "P"
    assert channels["finance"]["members"] == ["dana.lee", "lena.kim", "raj.patel"]  # overlay added lena
    assert channels["dm:dana.lee,raj.patel"]["type"] == "D"
    assert {"town-square", "off-topic", "sales", "hr-private"} <= set(channels)
    posts = {p["message"]: p for p in chat_state0["posts"]}
    root = posts["Can you check the Q1 accruals before Friday?"]
    assert root["create_at"] == ms("2024-03-04T09:15:00Z")  # historical time kept
    assert root["reactions"] == [{"user": "dana.lee", "emoji": "eyes"}]
    reply = posts["On it. The invoice from Northwind looks overdue."]
    assert (reply["root_id"], reply["user"], reply["create_at"]) == (
        root["id"],
        "dana.lee",
        ms("2024-03-04T09:20:00Z"),
    )
    assert posts["Budget template for Q2 attached."]["files"] == ["q2_budget.csv"]
    assert posts["Quick one - did the accrual go out?"]["channel"] == "dm:dana.lee,raj.patel"
    assert posts["Hi all, I will audit the March close."]["user"] == "lena.kim"


def _psql(sandbox, sql: str) -> str:
    result = sandbox.exec(
        ["/usr/lib/postgresql/15/bin/psql", "-X", "-At", "-d", "chat", "-c", sql], user="postgres"
    )
    assert result.ok, result.output
    return result.output.strip()


@pytest.mark.docker
def test_authors_lose_admin_rights_and_seed_tokens_are_revoked(chat_sandbox):
    assert _psql(chat_sandbox, "SELECT username FROM users WHERE roles LIKE '%system_admin%'") == "admin"
    owners = _psql(
        chat_sandbox,
        "SELECT u.username FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.kind = 'pat' ORDER BY 1",
    ).split()
    assert owners == ["admin", "dana.lee"]


@pytest.mark.docker
def test_tokens_are_private_and_the_agent_cannot_open_the_chat_database(chat_sandbox):
    stat = chat_sandbox.exec(
        "stat -c '%U %G %a' /egym/secrets/chat-admin-token /home/agent/.config/egym/chat.env", user="root"
    )
    assert stat.output.split("\n")[:2] == [
        "root grader 640",
        "agent agent 600",
    ]  # the grader reads chat with it
    env = chat_sandbox.exec("cat /home/agent/.config/egym/chat.env")
    assert "MATTERMOST_USERNAME=dana.lee" in env.output and "MATTERMOST_TEAM=acme" in env.output
    assert not chat_sandbox.exec("cat /egym/secrets/chat-admin-token").ok
    denied = chat_sandbox.exec(["psql", "-X", "-d", "chat", "-c", "SELECT count(*) FROM tokens"])
    assert not denied.ok and "permission denied" in denied.output


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("channels: [{name: x, memebers: [a]}]", "channels.0.memebers: Extra inputs are not permitted"),
        (
            "posts: [{channel: finance, user: ghost, message: boo}]",
            "user 'ghost' is neither in this file nor on the server",
        ),
        ("posts: [{channel: nowhere, user: raj.patel, message: hi}]", "post in unknown channel 'nowhere'"),
    ],
)
@pytest.mark.docker
def test_a_bad_chat_file_fails_with_one_line(chat_sandbox, text, error):
    chat_sandbox.write_file("/tmp/bad.yaml", text.encode(), user="root")
    result = chat_sandbox.exec([*PYTHON, "-m", "mcp_wrappers.chat.load", "/tmp/bad.yaml"], user="root")
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and error in result.output, result.output


@pytest.mark.docker
def test_stop_and_start_keep_the_data(chat_sandbox, chat_state0):
    stop = chat_sandbox.exec(
        "/opt/egym/mcp_wrappers/chat/image/stop && ! pgrep -u chat -f mcp_wrappers.mattermost_compat",
        user="root",
    )
    assert stop.ok, stop.output
    start = chat_sandbox.exec(
        "/opt/egym/mcp_wrappers/chat/image/start && /opt/egym/mcp_wrappers/chat/image/start", user="root"
    )  # idempotent
    assert start.ok, start.output
    after = chat_snapshot(chat_sandbox)
    assert {p["id"] for p in chat_state0["posts"]} <= {p["id"] for p in after["posts"]}
    owner = chat_sandbox.exec("ps -o user= -p $(cat /run/egym-chat.pid)", user="root")
    assert owner.output.strip() == "chat"
