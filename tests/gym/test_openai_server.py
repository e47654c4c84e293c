"""`egym models serve`: the bundled SmolLM2 behind OpenAI's chat API, spoken to by the `openai` client.

The server runs as the CLI in a subprocess. Greedy answers are compared with the hf
policy's own turn on the same messages (the same rendering, stops and parser), and a
tool call makes the round trip: forced with tool_choice="required", its result sent
back as a `tool` message, which the next prompt renders.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import openai
import pytest

from gym.interop.openai_server import to_messages
from gym.policies.hf import HFPolicy
from tests.interop.serving import egym_server

pytestmark = [pytest.mark.model, pytest.mark.slow]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ASK = [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]


@contextlib.contextmanager
def model_server(model: str = "smollm2") -> Iterator[str]:
    """`egym models serve` on a free port: its /v1 base URL; stopped like Ctrl-C."""
    with egym_server(
        "models", "serve", model, health="/v1/models", ready_within=180, stop_within=30
    ) as served:
        yield served.url + "/v1"


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    with model_server() as url:
        yield openai.OpenAI(base_url=url, api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def policy() -> HFPolicy:
    return HFPolicy("smollm2", temperature=0, max_new_tokens=24)


async def test_the_model_is_listed_and_answers_as_the_hf_policy_does(client, policy):
    assert [m.id for m in client.models.list().data] == ["smollm2"]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]
    reply = client.chat.completions.create(model="smollm2", messages=messages, max_tokens=24, temperature=0)
    expected = await policy.next(to_messages(messages), [])
    (choice,) = reply.choices
    assert choice.message.content == expected.content and choice.message.tool_calls is None
    assert choice.finish_reason == ("length" if expected.truncated else "stop")
    assert reply.usage.prompt_tokens == expected.prompt_tokens
    assert reply.usage.completion_tokens == expected.completion_tokens <= 24


def test_a_tool_call_round_trip(client, policy):
    first = client.chat.completions.create(
        model="smollm2", messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=60, temperature=0
    )
    (choice,) = first.choices
    (call,) = choice.message.tool_calls
    assert choice.finish_reason == "tool_calls" and call.function.name == "get_weather"
    assert set(json.loads(call.function.arguments)) == {"city"}  # decoded under the tool's JSON schema
    history = [
        *ASK,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 24 C"},
    ]
    second = client.chat.completions.create(
        model="smollm2", messages=history, tools=[WEATHER], max_tokens=40, temperature=0
    )
    # The call and its result are in the prompt, rendered as the hf policy renders them.
    assert second.usage.prompt_tokens == policy.count_tokens(to_messages(history), [WEATHER])
    assert second.usage.prompt_tokens > first.usage.prompt_tokens
    assert second.choices[0].finish_reason in ("stop", "length", "tool_calls")


def test_a_streamed_reply_carries_the_same_call(client):
    kwargs = {"model": "smollm2", "messages": ASK, "tools": [WEATHER], "tool_choice": "required"}
    whole = client.chat.completions.create(**kwargs, max_tokens=60, temperature=0)
    stream = client.chat.completions.create(
        **kwargs, max_tokens=60, temperature=0, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    calls = [c for chunk in chunks for choice in chunk.choices for c in choice.delta.tool_calls or []]
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        (c.function.name, c.function.arguments) for c in whole.choices[0].message.tool_calls
    ]
    assert [choice.finish_reason for chunk in chunks for choice in chunk.choices][-1] == "tool_calls"
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_what_is_not_served_is_a_one_line_error(client):
    with pytest.raises(
        openai.NotFoundError, match="model 'gpt-4' is not served here; this server has 'smollm2'"
    ):
        client.chat.completions.create(model="gpt-4", messages=ASK)
    with pytest.raises(openai.BadRequestError, match="n: Input should be 1"):
        client.chat.completions.create(model="smollm2", messages=ASK, n=2)
    with pytest.raises(openai.BadRequestError, match=r"messages\[0\]"):
        client.chat.completions.create(model="smollm2", messages=[{"role": "robot", "content": "hi"}])
