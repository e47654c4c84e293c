"""MattermostClient's transport: answers that are not JSON become ApiError, never a traceback."""

from __future__ import annotations

import httpx
import pytest

from mcp_wrappers.chat import client as chat_client
from mcp_wrappers.chat.client import ApiError, MattermostClient


def _client(answers: list[httpx.Response], seen: list[str]) -> MattermostClient:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return answers.pop(0)

    http = httpx.Client(base_url="http://chat.test/api/v4", transport=httpx.MockTransport(handle))
    return MattermostClient("http://chat.test", "tok", http=http)


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch):
    monkeypatch.setattr(chat_client, "RETRY_PAUSES_S", (0, 0, 0))


def test_a_get_answered_with_a_broken_body_is_retried_and_then_succeeds():
    seen: list[str] = []
    client = _client([httpx.Response(200, text='{"id": "abc", "usern'), httpx.Response(200, json=[])], seen)
    assert client.get("/users") == []
    assert seen == ["GET /api/v4/users", "GET /api/v4/users"]


def test_a_get_that_stays_broken_raises_api_error():
    seen: list[str] = []
    client = _client([httpx.Response(200, text="<html>busy</html>")] * 4, seen)
    with pytest.raises(ApiError) as caught:
        client.get("/channels")
    assert caught.value.status == 200 and caught.value.error_id == "invalid_json"
    assert "/channels" in str(caught.value) and "<html>busy" in str(caught.value)
    assert len(seen) == 4  # the first try and three retries


def test_a_post_with_a_broken_body_is_not_repeated():
    """A POST may have written something: it is reported, not sent again."""
    seen: list[str] = []
    client = _client([httpx.Response(201, text="")], seen)
    with pytest.raises(ApiError, match="not JSON"):
        client.post("/posts", {"channel_id": "x", "message": "hi"})
    assert seen == ["POST /api/v4/posts"]


def test_an_error_answer_that_is_not_json_keeps_its_status():
    client = _client([httpx.Response(502, text="Bad Gateway")], [])
    with pytest.raises(ApiError) as caught:
        client.get("/users/me")
    assert caught.value.status == 502 and "Bad Gateway" in caught.value.message


def test_a_user_in_no_channel_has_none_though_mattermost_streams_an_error_after_its_bracket():
    """Real Mattermost writes `[` before it looks up the user's channels (tests/mcp_wrappers/
    test_mattermost_real.py meets it); a not-found after that is an empty list, not a retry."""
    seen: list[str] = []
    streamed = (
        '[{"id":"app.channel.get_channels.not_found.app_error","message":"No channels were found.",'
        '"detailed_error":"","request_id":"x","status_code":404}'
    )
    client = _client([httpx.Response(200, text=streamed)], seen)
    assert client.user_channels("u1") == []
    assert seen == ["GET /api/v4/users/u1/channels"]


def test_a_user_channels_body_cut_short_is_still_retried():
    seen: list[str] = []
    channel = {"id": "c1", "name": "finance", "display_name": "Finance", "type": "P", "team_id": "t"}
    client = _client(
        [httpx.Response(200, text='[{"id": "c1", "na'), httpx.Response(200, json=[channel])], seen
    )
    assert [c.name for c in client.user_channels("u1")] == ["finance"]
    assert len(seen) == 2
