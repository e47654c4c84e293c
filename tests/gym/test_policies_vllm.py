"""The `vllm` policy and its engine, against a stand-in `vllm` (tests/gym/vllm_standin.py).

vLLM cannot be installed on the machines these tests run on, so what is tested
is the adapter's use of vLLM's documented API (arguments, outputs, batching,
adapters, errors), never the engine itself: that has not run.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from core.errors import PolicyError
from core.trajectory import Message
from gym.models.engine import Generation
from gym.policies import make_policy
from gym.policies.chat_render import render_prompt_ids
from gym.policies.vllm_engine import generation
from tests.gym import vllm_standin
from tests.gym.test_policies_hf import TURN_1, tiny  # noqa: F401 - `tiny` is a fixture

TOOLS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a command.", "parameters": {}}}
]
MESSAGES = [Message(role="system", content="You are Dana."), Message(role="user", content="hello")]


@pytest.fixture
def standin(monkeypatch, tiny):  # noqa: F811 - the imported fixture
    _, tokenizer = tiny
    monkeypatch.setitem(vllm_standin.TOKENIZERS, "tiny", tokenizer)
    return vllm_standin.install(monkeypatch), tokenizer


async def test_a_turn_carries_the_prompt_ids_the_sampled_ids_and_their_logprobs(standin):
    llm_class, tokenizer = standin
    policy = make_policy("vllm", model="tiny", temperature=0.7, seed=3, engine_args={"max_model_len": 4096})
    (llm,) = llm_class.built
    llm.script = tokenizer(TURN_1, add_special_tokens=False)["input_ids"]
    turn = await policy.next(MESSAGES, TOOLS)
    assert turn.tool_calls[0].name == "bash" and turn.token_ids == llm.script
    assert turn.logprobs == pytest.approx([-0.1 * (i + 1) for i in range(len(llm.script))])
    assert turn.prompt_token_ids == render_prompt_ids(tokenizer, MESSAGES, TOOLS)
    assert turn.finish_reason == "stop" and not turn.truncated
    assert llm.model == "tiny" and llm.engine_args == {
        "logprobs_mode": "processed_logprobs",  # after temperature: what the learner recomputes
        "enable_lora": False,
        "max_model_len": 4096,
    }
    (call,) = llm.calls
    assert call["prompts"] == [{"prompt_token_ids": turn.prompt_token_ids}] and call["lora_request"] is None
    (params,) = call["params"]
    assert (params.logprobs, params.n, params.temperature, params.top_k) == (0, 1, 0.7, -1)
    assert params.stop_token_ids == [tokenizer.eos_token_id] and params.seed is not None
    assert policy.context_window == 4096 and policy.count_tokens(MESSAGES, TOOLS) == len(
        turn.prompt_token_ids
    )


async def test_concurrent_episodes_are_answered_from_shared_batches(standin):
    llm_class, _ = standin
    first = make_policy("vllm", model="tiny", max_tokens=3, seed=1)
    others = [make_policy("vllm", model=first.engine, max_tokens=3, seed=s) for s in (2, 3, 4)]
    turns = await asyncio.gather(*(p.next(MESSAGES, []) for p in [first, *others]))
    (llm,) = llm_class.built  # one engine for all four
    assert [len(t.token_ids) for t in turns] == [3, 3, 3, 3] and all(
        t.finish_reason == "length" for t in turns
    )
    assert sum(len(call["prompts"]) for call in llm.calls) == 4 and len(llm.calls) <= 4


async def test_a_capped_copy_asks_the_engine_for_fewer_tokens(standin):
    llm_class, _ = standin
    policy = make_policy("vllm", model="tiny", max_tokens=5, seed=1)
    short = await policy.capped(2).next(MESSAGES, [])
    whole = await policy.next(MESSAGES, [])
    (llm,) = llm_class.built  # the copy shares the engine
    assert [call["params"][0].max_tokens for call in llm.calls] == [2, 5]
    assert (len(short.token_ids), len(whole.token_ids)) == (2, 5)


async def test_a_lora_adapter_is_served_under_its_own_id(standin):
    llm_class, _ = standin
    policy = make_policy("vllm", model="tiny", lora_path="/adapters/step-3", max_tokens=2)
    await policy.next(MESSAGES, [])
    (llm,) = llm_class.built
    assert llm.engine_args["enable_lora"] is True
    assert llm.calls[0]["lora_request"] == vllm_standin.LoRARequest("egym-1", 1, "/adapters/step-3")


async def test_an_engine_failure_reaches_the_episode_as_a_policy_error(standin, monkeypatch):
    llm_class, _ = standin
    policy = make_policy("vllm", model="tiny")

    def out_of_memory(*args, **kwargs):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(llm_class.built[0], "generate", out_of_memory)
    with pytest.raises(PolicyError, match="tiny: vLLM generation failed: RuntimeError: CUDA out of memory"):
        await policy.next(MESSAGES, [])


def test_an_output_without_logprobs_is_refused():
    output = SimpleNamespace(token_ids=[5, 6], logprobs=None, finish_reason="stop")
    with pytest.raises(PolicyError, match="0 logprob entries for 2 tokens; sampling must request logprobs=0"):
        generation(output)
    lengthy = SimpleNamespace(
        token_ids=[5], logprobs=[{5: SimpleNamespace(logprob=-1.5)}], finish_reason="length"
    )
    assert generation(lengthy, 7) == Generation([5], [-1.5], "length", prompt_tokens=7)
