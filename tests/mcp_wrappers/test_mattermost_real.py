"""The chat stack against REAL Mattermost (egym/world:mattermost, built by images/mattermost/build.sh).

The same loader, client and snapshot as with the built-in service; what they meet here is
the Mattermost server built from its Go module. Without the image these tests FAIL (they
do not skip): the image is part of the setup, and a skip would hide a broken build.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from mcp_wrappers import PYTHON
from tests.mcp_wrappers.chat_support import chat_overlay, chat_snapshot

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MATTERMOST_IMAGE = os.environ.get("EGYM_MATTERMOST_IMAGE", "egym/world:mattermost")

# Runs inside the container as root: the admin token the loader saved, the shared client.
CLIENT_SCRIPT = """
import json, secrets, sys
from mcp_wrappers.chat.client import ADMIN_TOKEN_FILE, MattermostClient
admin = MattermostClient("http://127.0.0.1:8065", ADMIN_TOKEN_FILE.read_text().strip())
out = {}
ping = admin.request("GET", "/system/ping")
out["version_header"] = ping.headers.get("X-Version-Id", "")
name = "probe" + secrets.token_hex(3)
password = secrets.token_urlsafe(18)
user = admin.create_user(username=name, email=name + "@example.com", password=password)
login = admin.request("POST", "/users/login", json={"login_id": name, "password": password})
out["login_status"] = login.status_code
out["login_user"] = login.json()["id"] == user.id
me = admin.with_token(login.headers["Token"]).me()
out["me"] = me.username
team = admin.team_by_name("acme")
admin.add_team_member(team.id, user.id)
as_user = admin.with_token(login.headers["Token"])
town = as_user.channel_by_name(team.id, "town-square")
post = as_user.create_post(town.id, "hello from the real server")
got = admin.get_post(post.id)
out["post"] = {"same_id": got.id == post.id, "message": got.message, "author": got.user_id == user.id}
reply = as_user.create_post(town.id, "a reply", root_id=post.id)
# (the order of a thread's list differs between servers; the MCP server sorts by time itself)
out["thread"] = [p.message for p in sorted(admin.thread(post.id).ordered(), key=lambda p: p.create_at)]
out["reply_root"] = admin.get_post(reply.id).root_id == post.id
loner = admin.create_user(username="loner" + secrets.token_hex(3), email=name + ".loner@example.com",
                          password=secrets.token_urlsafe(18))  # in no team, so in no channel
out["loner"] = {"username": loner.username, "channels": admin.user_channels(loner.id)}
try:
    admin.get_post("x" * 26)
except Exception as exc:
    out["missing_post"] = [exc.status, exc.error_id]
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def mattermost_sandbox():
    from core.errors import SandboxError
    from gym.sandbox import DockerSandbox
    from gym.sandbox.docker_client import require_image

    try:
        require_image(MATTERMOST_IMAGE)
    except SandboxError as exc:
        if "not found" not in str(exc):
            raise
        pytest.fail(
            f"image '{MATTERMOST_IMAGE}' not found: run `bash images/mattermost/build.sh`", pytrace=False
        )
    sandbox = DockerSandbox.start(
        MATTERMOST_IMAGE, apps=("db", "chat"), overlay=chat_overlay(), run_id="pytest-mattermost"
    )
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def client_results(mattermost_sandbox) -> dict:
    mattermost_sandbox.write_file("/tmp/mm_probe.py", CLIENT_SCRIPT.encode(), user="root")
    result = mattermost_sandbox.exec([*PYTHON, "/tmp/mm_probe.py"], user="root", timeout=60)
    assert result.ok, result.output[-2000:]
    return json.loads(result.output.strip().splitlines()[-1])


def test_the_chat_server_is_real_mattermost(mattermost_sandbox, client_results):
    # Real Mattermost stamps every answer with its build; the built-in service sends no such header.
    assert client_results["version_header"].startswith(("11.", "10.")), client_results
    ps = mattermost_sandbox.exec("ps -o user=,args= -C mattermost", user="root")
    assert "chat" in ps.output and "/opt/mattermost/bin/mattermost server" in ps.output, ps.output


def test_password_login_answers_200_with_a_session_token(client_results):
    assert client_results["login_status"] == 200
    assert client_results["login_user"] and client_results["me"].startswith("probe")


def test_posts_create_and_read_back_through_the_shared_client(client_results):
    assert client_results["post"] == {
        "same_id": True,
        "message": "hello from the real server",
        "author": True,
    }
    assert client_results["thread"] == ["hello from the real server", "a reply"]
    assert client_results["reply_root"] is True
    status, error_id = client_results["missing_post"]
    assert status == 404 and error_id  # Mattermost's error body: an id such as app.post.get.app_error


def test_a_user_in_no_channel_has_none_and_the_snapshot_still_reads(mattermost_sandbox, client_results):
    """The server streams `[` and then a not-found error for such a user (a bot, say); the grader's
    snapshot once failed on it. The client reads it as no channels."""
    assert client_results["loner"]["channels"] == []
    users = {u["username"] for u in chat_snapshot(mattermost_sandbox)["users"]}
    assert client_results["loner"]["username"] in users


def test_the_world_and_task_chat_files_loaded_through_the_api(mattermost_sandbox):
    state = chat_snapshot(mattermost_sandbox)
    users = {u["username"]: u for u in state["users"]}
    assert users["raj.patel"]["position"] == "Controller" and "lena.kim" in users  # lena: the task overlay
    channels = {c["name"]: c for c in state["channels"]}
    assert channels["finance"]["type"] == "P"
    assert channels["finance"]["members"] == ["dana.lee", "lena.kim", "raj.patel"]
    assert "dm:dana.lee,raj.patel" in channels
    people = [p for p in state["posts"] if p["message"] == "Can you check the Q1 accruals before Friday?"]
    assert len(people) == 1
    root = people[0]
    # Historical timestamps survive: the loader made the author an admin while writing (Mattermost's rule).
    assert root["create_at"] == 1709543700000 and root["user"] == "raj.patel"
    assert root["reactions"] == [{"user": "dana.lee", "emoji": "eyes"}]
    replies = [p["message"] for p in state["posts"] if p["root_id"] == root["id"]]
    assert replies[:2] == ["On it. The invoice from Northwind looks overdue.", "Thanks!"]
    budget = next(p for p in state["posts"] if p["message"] == "Budget template for Q2 attached.")
    assert budget["files"] == ["q2_budget.csv"]
    # The loader gave the authors their roles back.
    roles = mattermost_sandbox.exec([*PYTHON, "-c", ROLES_SCRIPT], user="root", timeout=30)
    assert roles.ok and json.loads(roles.output)["raj.patel"] == "system_user", roles.output


ROLES_SCRIPT = """
import json
from mcp_wrappers.chat.client import ADMIN_TOKEN_FILE, MattermostClient
admin = MattermostClient("http://127.0.0.1:8065", ADMIN_TOKEN_FILE.read_text().strip())
print(json.dumps({u.username: u.roles for u in admin.users()}))
"""


def test_the_agent_token_works_and_is_the_agents(mattermost_sandbox):
    script = (
        "from mcp_wrappers.chat.client import MattermostClient; c = MattermostClient.for_agent(); "
        "print(c.me().username, len(c.my_channels(c.team_by_name('acme').id)))"
    )
    result = mattermost_sandbox.exec([*PYTHON, "-c", script], user="agent", timeout=30)
    assert result.ok, result.output
    name, channel_count = result.output.split()
    assert name == "dana.lee" and int(channel_count) >= 4  # town-square, off-topic, finance, a DM


def test_stop_and_start_keep_the_data(mattermost_sandbox):
    before = {p["id"] for p in chat_snapshot(mattermost_sandbox)["posts"]}
    stop = mattermost_sandbox.exec(
        "/opt/egym/mcp_wrappers/chat/image/stop && /opt/egym/mcp_wrappers/chat/image/start",
        user="root",
        timeout=120,
    )
    assert stop.ok, stop.output
    assert {p["id"] for p in chat_snapshot(mattermost_sandbox)["posts"]} == before


def test_chat_real_runs_a_chat_task_on_the_real_server_with_the_same_grade(tmp_path):
    """`--chat real` starts the task's sandbox from the Mattermost image; the oracle's grade is the compat one."""
    import subprocess
    import sys
    from pathlib import Path

    egym = str(Path(sys.executable).with_name("egym"))
    grades = {}
    for chat in ("real", "compat"):
        done = subprocess.run(
            [egym, "rollout", "tasks/acme/easter-coverage", "--policy", "oracle", "--chat", chat]
            + ["--store", str(tmp_path / "runs.db")],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "EGYM_IMAGE"},
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        # the grade's summary line: 'earned/possible (percent) ...'
        grades[chat] = re.search(r"(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) \(", done.stdout).groups()
    earned, possible = grades["real"]
    assert earned == possible and grades["compat"] == grades["real"], grades


def test_chat_real_selects_the_mattermost_image_and_refuses_a_clash(monkeypatch):
    from core.errors import SandboxError
    from gym.sandbox.docker_client import default_image, select_chat

    # setenv, not delenv: monkeypatch then restores the variable select_chat sets below, so the
    # tests after this one do not run on the Mattermost image
    monkeypatch.setenv("EGYM_IMAGE", "")
    assert default_image() == "egym/world:latest"
    select_chat("real")
    assert default_image() == MATTERMOST_IMAGE == os.environ["EGYM_IMAGE"]
    with pytest.raises(SandboxError, match="--chat compat wants image egym/world:latest but EGYM_IMAGE is"):
        select_chat("compat")
    with pytest.raises(SandboxError, match="--chat 'mm': expected one of compat, real"):
        select_chat("mm")
