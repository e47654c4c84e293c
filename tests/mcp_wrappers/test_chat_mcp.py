"""The chat MCP server (python3 -m mcp_wrappers.chat), driven over docker exec stdio as the agent.

Every tool is called with a good and a bad input; writes are read back through the API
(the grader's snapshot), not through the tool that made them.
"""

from __future__ import annotations

import asyncio
import re

import pytest
import pytest_asyncio
from jsonschema import Draft202012Validator

from tests.mcp_wrappers.chat_support import chat_snapshot

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.docker]

TOOLS = {
    "list_channels",
    "read_channel",
    "read_thread",
    "post_message",
    "reply_in_thread",
    "send_direct_message",
    "add_reaction",
    "search_messages",
    "get_user",
    "list_users",
    "create_channel",
    "add_channel_member",
    "attach_file",
}

# tool: (good arguments, text the answer contains, bad arguments, text the error contains)
# "{root}" stands for the initial thread's first post ("Can you check the Q1 accruals...").
CASES = {
    "list_channels": ({}, "#finance (private", {"query": 123}, "query"),
    "read_channel": (
        {"channel": "#finance", "limit": 5},
        "thread: 2 replies",
        {"channel": "financ"},
        "Did you mean: finance",
    ),
    "read_thread": (
        {"post_id": "{root}"},
        "On it. The invoice from Northwind",
        {"post_id": "x" * 26},
        "not found",
    ),
    "post_message": (
        {"channel": "finance", "message": "tool check"},
        "Posted to #finance",
        {"channel": "sales", "message": "hi"},
        "join first with add_channel_member",
    ),
    "reply_in_thread": (
        {"post_id": "{root}", "message": "threaded check"},
        "Posted to thread",
        {"post_id": "nope", "message": "x"},
        "Invalid or missing post_id",
    ),
    "send_direct_message": (
        {"username": "@raj.patel", "message": "dm check"},
        "Posted to @raj.patel",
        {"username": "raj", "message": "x"},
        "Did you mean: raj.patel",
    ),
    "add_reaction": (
        {"post_id": "{root}", "emoji": ":white_check_mark:"},
        "Reacted :white_check_mark:",
        {"post_id": "{root}", "emoji": "not an emoji!"},
        "Invalid emoji name",
    ),
    "search_messages": (
        {"query": "accruals", "from_user": "raj.patel"},
        "Q1 accruals",
        {"query": "on:2024-13-45"},
        "Invalid date",
    ),
    "get_user": (
        {"username": "raj.patel"},
        "position: Controller",
        {"username": "rajp"},
        "Did you mean: raj.patel",
    ),
    "list_users": (
        {"channel": "finance"},
        "@lena.kim — Lena Kim, Auditor",
        {"channel": "no-such-channel"},
        "No channel 'no-such-channel'",
    ),
    "create_channel": (
        {"name": "Q3 Audit", "private": True},
        "Created private channel #q3-audit",
        {"name": "bad/name!"},
        "Channel name must be",
    ),
    "add_channel_member": (
        {"channel": "q3-audit", "username": "mia.wong"},
        "@mia.wong is now a member of #q3-audit",
        # a public channel the agent is not in: only its members may add people (Mattermost's rule)
        {"channel": "sales", "username": "omar.haddad"},
        "Only members of #sales can add people; join first",
    ),
    "attach_file": (
        {"channel": "finance", "path": "notes/summary.txt", "message": "summary"},
        "Shared summary.txt to #finance",
        {"channel": "finance", "path": "/etc/passwd"},
        "outside /workspace",
    ),
}
ORDER = [
    "list_channels",
    "read_channel",
    "read_thread",
    "get_user",
    "list_users",
    "search_messages",
    "post_message",
    "reply_in_thread",
    "send_direct_message",
    "add_reaction",
    "create_channel",
    "add_channel_member",
    "attach_file",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chat_mcp(chat_sandbox):
    from gym.mcp_client import McpServerConnection

    chat_sandbox.exec("mkdir -p /workspace/notes && printf 'all good\\n' > /workspace/notes/summary.txt")
    # pytest-asyncio tears fixtures down in another task than set them up, and the MCP session's
    # task group must exit where it entered: one task holds the session open until the module ends.
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with McpServerConnection(chat_sandbox, "chat") as connection:
                ready.set_result(connection)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    yield await ready
    done.set()
    await holder


@pytest.fixture(scope="module")
def chat_root_id(chat_sandbox) -> str:
    posts = chat_snapshot(chat_sandbox)["posts"]
    return next(p["id"] for p in posts if p["message"].startswith("Can you check the Q1 accruals"))


def _fill(args: dict, root: str) -> dict:
    return {k: v.replace("{root}", root) if isinstance(v, str) else v for k, v in args.items()}


async def test_tools_list_every_tool_with_a_valid_input_schema(chat_mcp):
    tools = {t.name: t for t in await chat_mcp.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert "Example" in tool.description, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description") or name in ("limit",), f"{tool.name}.{name} has no description"


@pytest.mark.parametrize("tool", ORDER)
async def test_tool_good_and_bad_input(chat_mcp, chat_root_id, tool):
    good, good_text, bad, bad_text = CASES[tool]
    ok = await chat_mcp.call_tool(tool, _fill(good, chat_root_id))
    assert not ok.is_error and good_text in ok.text, ok.text
    failed = await chat_mcp.call_tool(tool, _fill(bad, chat_root_id))
    assert failed.is_error and bad_text in failed.text, failed.text
    assert "Traceback" not in failed.text


def _post_id(text: str) -> str:
    match = re.search(r"post_id=([a-z0-9]{26})", text)
    assert match, text
    return match.group(1)


async def test_writes_are_read_back_through_the_api(chat_mcp, chat_sandbox, chat_root_id):
    posted = _post_id(
        (await chat_mcp.call_tool("post_message", {"channel": "finance", "message": "read me back"})).text
    )
    reply = _post_id(
        (await chat_mcp.call_tool("reply_in_thread", {"post_id": posted, "message": "and me"})).text
    )
    dm = _post_id(
        (await chat_mcp.call_tool("send_direct_message", {"username": "mia.wong", "message": "psst"})).text
    )
    shared = _post_id(
        (
            await chat_mcp.call_tool(
                "attach_file", {"channel": "@raj.patel", "path": "notes/summary.txt", "post_id": ""}
            )
        ).text
    )
    assert not (await chat_mcp.call_tool("add_reaction", {"post_id": posted, "emoji": "tada"})).is_error
    posts = {p["id"]: p for p in chat_snapshot(chat_sandbox)["posts"]}
    assert posts[posted] | {"create_at": 0, "id": ""} == {
        "id": "",
        "channel": "finance",
        "user": "dana.lee",
        "message": "read me back",
        "root_id": "",
        "create_at": 0,
        "reactions": [{"user": "dana.lee", "emoji": "tada"}],
        "files": [],
    }
    assert posts[reply]["root_id"] == posted and posts[reply]["message"] == "and me"
    assert posts[dm]["channel"] == "dm:dana.lee,mia.wong"
    assert posts[shared]["channel"] == "dm:dana.lee,raj.patel" and posts[shared]["files"] == ["summary.txt"]


async def test_read_channel_pages_newest_first(chat_mcp):
    first = (await chat_mcp.call_tool("read_channel", {"channel": "finance", "limit": 1})).text
    second = (await chat_mcp.call_tool("read_channel", {"channel": "finance", "limit": 1, "page": 1})).text
    assert "Older messages: read_channel" in first
    stamps = [re.search(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d) UTC\]", t).group(1) for t in (first, second)]
    assert stamps[0] >= stamps[1]


async def test_search_in_a_direct_message(chat_mcp):
    found = await chat_mcp.call_tool("search_messages", {"query": "accrual", "channel": "@raj.patel"})
    assert not found.is_error and "did the accrual go out?" in found.text
    assert "Q1 accruals" not in found.text  # that one is in #finance
