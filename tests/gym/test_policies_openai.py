"""The `openai` policy against a local server speaking the chat-completions protocol (tests/fakes)."""

from __future__ import annotations

import datetime as dt

import pytest

from core.errors import PolicyError
from core.trajectory import Message
from gym.harness import HarnessConfig, run_episode
from gym.policies import make_policy
from gym.policies.base import ContextLimitExceeded
from gym.sandbox import DockerSandbox
from gym.tasks import AgentIdentity, Task, World
from tests.fakes.openai_server import FakeOpenAI, Reply

WORLD = World(
    name="w",
    company="Acme Corp",
    date=dt.date(2025, 3, 14),
    agent=AgentIdentity(name="Dana Reyes", title="Analyst", email="d@acme.test", chat_username="dana"),
)
DEMO_SERVER = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("demo")

@app.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()

app.run()
'''
HELLO = [Message(role="system", content="s"), Message(role="user", content="hi")]


def policy_for(server: FakeOpenAI, **options):
    return make_policy("openai", model="fake-model", base_url=server.base_url, api_key="test", **options)


@pytest.mark.docker
async def test_an_episode_with_tool_calls_a_malformed_argument_and_a_429(docker_image, tmp_path):
    def respond(request):
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        if turn == 0:
            return Reply.tool_calls([("bash", '{"command": "echo hi"')])  # malformed JSON
        if turn == 1:
            return Reply.tool_calls([("demo__shout", '{"text": "quarter closed"}')])
        if not any(r.status == 429 for r in replies):
            return Reply.error(429, "rate limited", headers={"Retry-After": "1"})
        return Reply.text(
            "All done.", usage={"prompt_tokens": 321, "completion_tokens": 3, "total_tokens": 324}
        )

    replies: list[Reply] = []

    def recording(request):
        replies.append(respond(request))
        return replies[-1]

    task = Task(id="t", title="t", world="w", prompt="Announce it.", apps=[], path=tmp_path)
    config = HarnessConfig(mcp_servers={"demo": ["python3", "-c", DEMO_SERVER]})
    with (
        FakeOpenAI(recording) as server,
        DockerSandbox.start(docker_image, run_id="pytest-openai") as sandbox,
    ):
        trajectory = await run_episode(sandbox, task, WORLD, policy_for(server, temperature=0.2), config)

    assert trajectory.error is None, trajectory.meta.get("traceback")
    assert trajectory.stop_reason == "answered" and trajectory.final_answer == "All done."
    assert trajectory.model == "fake-model"
    assert [c.name for c in trajectory.tool_calls()] == ["bash", "demo.shout"]  # canonical names
    malformed, shouted = (step.results[0] for step in trajectory.steps[:2])
    assert malformed.is_error and "not valid JSON" in malformed.output
    assert shouted.output == "QUARTER CLOSED" and not shouted.is_error
    assert trajectory.steps[-1].turn.prompt_tokens == 321

    requests = server.requests
    assert len(requests) == 4  # three turns, one of them retried after the 429
    assert requests[2] == requests[3]
    wire_tools = [t["function"]["name"] for t in requests[0]["tools"]]
    assert "demo__shout" in wire_tools and not any("." in name for name in wire_tools)
    assert requests[0]["temperature"] == 0.2 and requests[0]["model"] == "fake-model"
    # the model read its own mistake as a tool result; the history it is sent stays valid JSON
    second = requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "not valid JSON" in second[-1]["content"]
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert requests[2]["messages"][-2]["tool_calls"][0]["function"]["name"] == "demo__shout"


async def test_token_ids_and_logprobs_when_the_server_returns_them():
    def respond(request):
        reply = Reply.text(
            "ok",
            logprobs={
                "content": [
                    {"token": "token_id:17", "logprob": -0.5, "bytes": None, "top_logprobs": []},
                    {"token": "token_id:2", "logprob": -0.01, "bytes": None, "top_logprobs": []},
                ]
            },
            extra_choice={"token_ids": [17, 2]},
        )
        reply.body["prompt_token_ids"] = [1, 5, 9]
        return reply

    with FakeOpenAI(respond) as server:
        turn = await policy_for(server, token_ids=True).next(HELLO, [])
    assert (turn.prompt_token_ids, turn.token_ids, turn.logprobs) == ([1, 5, 9], [17, 2], [-0.5, -0.01])
    request = server.requests[0]
    assert request["logprobs"] is True and request["return_token_ids"] is True
    assert request["return_tokens_as_token_ids"] is True


async def test_token_ids_from_token_strings_and_graceful_absence():
    tokens = {"content": [{"token": "token_id:4", "logprob": -1.0, "bytes": None, "top_logprobs": []}]}
    with FakeOpenAI(lambda r: Reply.text("a", logprobs=tokens)) as server:
        turn = await policy_for(server, token_ids=True).next(HELLO, [])
    assert (turn.token_ids, turn.logprobs, turn.prompt_token_ids) == ([4], [-1.0], None)
    with FakeOpenAI(lambda r: Reply.text("plain")) as server:
        turn = await policy_for(server).next(HELLO, [])
    assert (turn.content, turn.token_ids, turn.logprobs) == ("plain", None, None)
    assert "logprobs" not in server.requests[0]


async def test_a_failing_endpoint_is_a_policy_error_after_retries():
    with (
        FakeOpenAI(lambda r: Reply.error(500, "boom")) as server,
        pytest.raises(PolicyError, match="failed after retries"),
    ):
        await policy_for(server, max_retries=1).next(HELLO, [])
    assert len(server.requests) == 2


async def test_a_context_length_rejection_ends_as_context_limit():
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    with (
        FakeOpenAI(lambda r: Reply.error(400, message)) as server,
        pytest.raises(ContextLimitExceeded, match="maximum context length"),
    ):
        await policy_for(server).next(HELLO, [])


async def test_summarize_asks_the_endpoint():
    with FakeOpenAI(lambda r: Reply.text("Listed files; found q3.csv.")) as server:
        summary = await policy_for(server).summarize(HELLO)
    assert summary == "Listed files; found q3.csv."
    assert "compress" in server.requests[0]["messages"][0]["content"]
    assert "tools" not in server.requests[0]


def test_a_model_name_is_required(monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    with pytest.raises(PolicyError, match="OPENAI_MODEL"):
        make_policy("openai")


async def test_tool_choice_first_asks_for_a_call_on_the_first_turn_only():
    from core.trajectory import ToolCall

    tool = {"type": "function", "function": {"name": "db.query", "description": "SQL", "parameters": {}}}
    with FakeOpenAI(lambda request: Reply.text("ok")) as server:
        policy = policy_for(server, tool_choice="first")
        await policy.next(HELLO, [tool])
        called = [
            *HELLO,
            Message(role="assistant", tool_calls=[ToolCall(id="1", name="db.query", arguments="{}")]),
            Message(role="tool", content="3", tool_call_id="1", name="db.query"),
        ]
        await policy.next(called, [tool])
    assert [r.get("tool_choice") for r in server.requests] == ["required", None]
    with pytest.raises(PolicyError, match="tool_choice must be"):
        policy_for(server, tool_choice="sometimes")


async def test_a_reply_cut_at_max_tokens_is_truncated():
    with FakeOpenAI(lambda request: Reply.text("The total is", finish_reason="length")) as server:
        turn = await policy_for(server).next(HELLO, [])
    assert turn.truncated and turn.finish_reason == "length"


VLLM_REFUSAL = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
QUERY = {
    "type": "function",
    "function": {
        "name": "db.query",
        "description": "Run a read-only SQL query.",
        "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    },
}


def vllm_without_tool_flags(request):
    """vLLM started without --enable-auto-tool-choice: a request with `tools` is refused; text is not."""
    if "tools" in request:
        return Reply.error(400, VLLM_REFUSAL)
    if any(m["role"] == "user" and "<tool_response" in m["content"] for m in request["messages"]):
        return Reply.text("There are 3 open invoices.")
    return Reply.text('Let me look.\n<tool_call>[{"name": "db.query", "arguments": {"sql": "select 3"}}]')


async def test_a_server_that_refuses_tools_says_how_to_start_it_or_use_tools_in_the_prompt():
    with (
        FakeOpenAI(vllm_without_tool_flags) as server,
        pytest.raises(PolicyError, match=r"--enable-auto-tool-choice .*-o tools=prompt"),
    ):
        await policy_for(server).next(HELLO, [QUERY])


async def test_tools_in_the_prompt_are_listed_and_read_back_from_the_reply():
    with FakeOpenAI(vllm_without_tool_flags) as server:
        policy = policy_for(server, tools="prompt")
        first = await policy.next(HELLO, [QUERY])
        assert first.content == "Let me look."
        assert [(c.name, c.arguments, c.error) for c in first.tool_calls] == [
            ("db.query", '{"sql": "select 3"}', None)
        ]
        answered = [
            *HELLO,
            Message(role="assistant", content=first.content, tool_calls=first.tool_calls),
            Message(role="tool", content="3", tool_call_id=first.tool_calls[0].id, name="db.query"),
        ]
        second = await policy.next(answered, [QUERY])
    assert second.content == "There are 3 open invoices." and second.tool_calls == []
    asked, followed = server.requests
    assert "tools" not in asked and asked["stop"] == ["</tool_call>"]
    assert (
        asked["messages"][0]["role"] == "system"
        and "- db.query(sql: string)" in asked["messages"][0]["content"]
    )
    assert '<tool_call>[{"name": "db.query"' in followed["messages"][2]["content"]  # the call, as text
    assert followed["messages"][3] == {
        "role": "user",
        "content": '<tool_response name="db.query">\n3\n</tool_response>',
    }
    with pytest.raises(PolicyError, match="tool_choice needs tools=api"):
        policy_for(server, tools="prompt", tool_choice="first")
