"""The chat service against the official Mattermost OpenAPI schemas, and its permission rules.

chat_walk.py runs inside the container and calls every endpoint the service serves (good and bad
requests); every response is validated here against the documented schema for its status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_wrappers import PYTHON
from tests.mcp_wrappers import chat_openapi as openapi

pytestmark = pytest.mark.docker

# Served but absent from the fragments in ../shared (system.yaml is not among them).
NOT_IN_SPEC = {("get", "/api/v4/system/ping"), ("get", "/api/v4/config/client")}
# Where real Mattermost's status differs from its documentation (clients such as mattermostautodriver
# check for the real one): served status -> the documented one whose schema the body must match.
REAL_STATUS = {
    ("post", "/api/v4/users/login"): (200, 201),
    ("post", "/api/v4/users/logout"): (200, 201),
    ("post", "/api/v4/users/{user_id}/tokens"): (200, 201),
}
# Documented without a 200 body: the download returns the file's bytes.
BINARY = {("get", "/api/v4/files/{file_id}")}


@pytest.fixture(scope="module")
def chat_exchanges(chat_sandbox) -> list[dict]:
    chat_sandbox.write_file(
        "/tmp/chat_walk.py", (Path(__file__).parent / "chat_walk.py").read_bytes(), user="root"
    )
    result = chat_sandbox.exec([*PYTHON, "/tmp/chat_walk.py"], user="root", timeout=120)
    lines = [line for line in result.output.splitlines() if line.startswith("{")]
    assert result.ok, result.output[-2000:]
    return [json.loads(line) for line in lines]


def served_routes() -> set[tuple[str, str]]:
    from mcp_wrappers.mattermost_compat.app import build_app

    return {
        (method.lower(), route.path)
        for route in build_app().routes
        for method in getattr(route, "methods", None) or ()  # the WebSocket route has none
        if method != "HEAD"
    }


def test_walk_covers_every_served_endpoint(chat_exchanges):
    walked = {(e["method"], e["route"]) for e in chat_exchanges}
    assert served_routes() - NOT_IN_SPEC - walked == set()
    # and every served endpoint is one Mattermost documents (same method and path template)
    paths = openapi.spec()["paths"]
    undocumented = {(m, r) for m, r in served_routes() - NOT_IN_SPEC if m not in paths.get(r, {})}
    assert undocumented == set()


def test_every_response_validates_against_the_official_schema(chat_exchanges):
    problems = []
    for e in chat_exchanges:
        key = (e["method"], e["route"])
        if key in NOT_IN_SPEC:
            continue
        served, documented_as = REAL_STATUS.get(key, (None, None))
        status = documented_as if e["status"] == served else e["status"]
        documented = str(status) in openapi.spec()["paths"][e["route"]][e["method"]]["responses"]
        if key in BINARY and e["status"] == 200:
            continue
        if documented:
            errors = openapi.validate(e["method"], e["route"], status, e["body"])
        elif e["status"] >= 400:  # an error the fragment does not list: still Mattermost's error body
            errors = openapi.validate("get", "/api/v4/users/{user_id}", 404, e["body"])
        else:
            errors = [f"success status {e['status']} is not documented"]
        problems += [f"{e['method'].upper()} {e['route']} -> {e['status']}: {err}" for err in errors]
    assert problems == []


def test_errors_use_mattermost_error_body(chat_exchanges):
    errors = [e for e in chat_exchanges if e["status"] >= 400]
    assert {e["status"] for e in errors} >= {400, 401, 403, 404}
    for e in errors:
        body = e["body"]
        assert set(body) == {"id", "message", "detailed_error", "request_id", "status_code"}, e
        assert body["status_code"] == e["status"] and body["message"] and len(body["request_id"]) == 26


def test_ids_and_timestamps_look_like_mattermost(chat_exchanges):
    created = [
        e["body"]
        for e in chat_exchanges
        if e["status"] == 201
        and isinstance(e["body"], dict)
        and "id" in e["body"]
        and "create_at" in e["body"]
    ]
    assert created
    for body in created:
        assert len(body["id"]) == 26 and body["id"].isalnum() and body["id"].islower()
        assert body["create_at"] > 1_500_000_000_000  # milliseconds, not seconds


PERMISSION_PROBE = """
import httpx, json, pathlib
admin = pathlib.Path('/egym/secrets/chat-admin-token').read_text().strip()
env = dict(l.split('=', 1) for l in pathlib.Path('/home/agent/.config/egym/chat.env').read_text().split())
api = httpx.Client(base_url='http://127.0.0.1:8065/api/v4')
def ids(token):
    return {n: api.get(f'/teams/name/acme/channels/name/{n}', headers={'Authorization': 'Bearer ' + token}).json()
            for n in ('hr-private', 'finance')}
channels = ids(admin)
agent = {'Authorization': 'Bearer ' + env['MATTERMOST_TOKEN']}
out = {}
for name, channel in channels.items():
    out[name] = [
        api.get(f"/channels/{channel['id']}", headers=agent).status_code,
        api.get(f"/channels/{channel['id']}/posts", headers=agent).status_code,
        api.post('/posts', json={'channel_id': channel['id'], 'message': 'probe in ' + name}, headers=agent).status_code,
    ]
print(json.dumps(out))
"""


def test_non_member_cannot_read_or_post_in_private_channel(chat_sandbox, chat_state):
    result = chat_sandbox.exec([*PYTHON, "-c", PERMISSION_PROBE], user="root")
    assert result.ok, result.output
    statuses = json.loads(result.output.strip().splitlines()[-1])
    assert statuses["hr-private"] == [403, 403, 403]  # dana.lee is not a member
    assert statuses["finance"] == [200, 200, 201]  # ... but is one here
    state = chat_state()
    hr = next(c for c in state["channels"] if c["name"] == "hr-private")
    assert "dana.lee" not in hr["members"]
    posted = {p["message"] for p in state["posts"] if p["user"] == "dana.lee"}
    assert "probe in finance" in posted and "probe in hr-private" not in posted
