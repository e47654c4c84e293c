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
