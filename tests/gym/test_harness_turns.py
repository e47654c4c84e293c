"""Turn semantics: a turn cut by max tokens or the time limit keeps what it wrote and is never the final answer.

No tool is called, so no container is needed (the harness starts its shell and
file helper only on first use).
"""

from __future__ import annotations

import datetime as dt

import torch

from core.trajectory import AssistantTurn
from gym.harness import HarnessConfig, run_episode
from gym.models.engine import Engine
from gym.policies.hf import HFPolicy
from gym.tasks import AgentIdentity, Limits, Task, World
from trainer.toy import build_toy_model

WORLD = World(
    name="w",
    company="Acme",
    date=dt.date(2025, 3, 14),
    agent=AgentIdentity(name="Dana", title="Analyst", email="d@acme.test", chat_username="dana"),
)
NO_TOOLS = HarnessConfig(mcp_servers={})
CHATML = "{% for m in messages %}<bos>{{ m.role }} {{ m.content }}<eos>{% endfor %}<bos>assistant "


def task(tmp_path, **limits) -> Task:
    return Task(
        id="t", title="t", world="w", prompt="Say hi.", apps=[], limits=Limits(**limits), path=tmp_path
    )


class Scripted:
    name = "scripted"

    def __init__(self, turns: list[AssistantTurn]):
        self.turns = list(turns)

    async def next(self, messages, tools):
        return self.turns.pop(0)


async def test_a_turn_cut_at_max_tokens_is_not_the_answer(tmp_path):
    policy = Scripted(
        [
            AssistantTurn(content="The total is", finish_reason="length", truncated=True),
            AssistantTurn(content="The total is 42.", finish_reason="stop"),
        ]
    )
    trajectory = await run_episode(object(), task(tmp_path, max_turns=5), WORLD, policy, NO_TOOLS)
    assert trajectory.stop_reason == "answered" and trajectory.final_answer == "The total is 42."
    assert [s.turn.truncated for s in trajectory.steps] == [True, False]


async def test_only_truncated_turns_end_at_the_turn_limit_without_an_answer(tmp_path):
    cut = AssistantTurn(content="and then", finish_reason="length", truncated=True)
    trajectory = await run_episode(
        object(), task(tmp_path, max_turns=2), WORLD, Scripted([cut, cut]), NO_TOOLS
    )
    assert trajectory.stop_reason == "turn_limit" and trajectory.final_answer is None


async def test_the_time_limit_keeps_the_partial_turn_of_a_local_model(tmp_path):
    torch.set_num_threads(1)
    model, tokenizer = build_toy_model(seed=2)
    model.config.max_position_embeddings = 100_000
    tokenizer.chat_template = CHATML
    eos = tokenizer.eos_token_id

    def never_end(generated, logits):
        logits = logits.clone()
        logits[eos] = float("-inf")
        return logits

    policy = HFPolicy(Engine(model, tokenizer), max_new_tokens=30_000, logits_processor=never_end)
    trajectory = await run_episode(object(), task(tmp_path, time_limit_s=1.5), WORLD, policy, NO_TOOLS)
    assert trajectory.stop_reason == "time_limit" and trajectory.final_answer is None
    (step,) = trajectory.steps
    turn = step.turn
    assert turn.truncated and turn.finish_reason == "cancelled"
    assert len(turn.token_ids) == len(turn.logprobs) > 10 and turn.content
    assert trajectory.messages[-1].content == turn.content  # in the transcript too


async def test_a_call_with_ten_thousand_arguments_is_one_short_error(tmp_path):
    import json

    from core.trajectory import ToolCall

    huge = ToolCall(id="c1", name="bash", arguments=json.dumps({f"arg{i}": i for i in range(10_000)}))
    policy = Scripted([AssistantTurn(tool_calls=[huge]), AssistantTurn(content="done")])
    trajectory = await run_episode(object(), task(tmp_path, max_turns=3), WORLD, policy, NO_TOOLS)
    assert trajectory.stop_reason == "answered"
    (result,) = trajectory.steps[0].results
    assert result.is_error and len(result.output) < 2000 and "arg0" in result.output


def _endless_policy(max_new_tokens: int) -> HFPolicy:
    """The toy model, never writing its end token: every turn runs to its token limit."""
    model, tokenizer = build_toy_model(seed=2)
    model.config.max_position_embeddings = 100_000  # the prompt lists the built-in tools
    tokenizer.chat_template = CHATML
    eos = tokenizer.eos_token_id

    def never_end(generated, logits):
        logits = logits.clone()
        logits[eos] = float("-inf")
        return logits

    return HFPolicy(Engine(model, tokenizer), max_new_tokens=max_new_tokens, logits_processor=never_end)


async def test_level_caps_reach_the_episode_of_that_level_only(tmp_path):
    torch.set_num_threads(1)
    policy = _endless_policy(max_new_tokens=6)
    caps = HarnessConfig(mcp_servers={}, limits_by_level={0: {"max_turns": 2, "max_new_tokens": 3}})

    def instance(level: int) -> Task:
        return task(tmp_path, max_turns=4).model_copy(update={"id": f"price-l{level}-s7"})

    capped = await run_episode(object(), instance(0), WORLD, policy, caps)
    assert capped.stop_reason == "turn_limit" and len(capped.steps) == 2
    assert [len(s.turn.token_ids) for s in capped.steps] == [3, 3]
    assert capped.meta["limits"]["max_turns"] == 2 and capped.meta["limits"]["max_new_tokens"] == 3
    assert policy.sampling.max_new_tokens == 6  # the caller's policy is not changed

    other_level = await run_episode(object(), instance(1), WORLD, policy, caps)
    assert len(other_level.steps) == 4 and [len(s.turn.token_ids) for s in other_level.steps] == [6] * 4
    assert "max_new_tokens" not in other_level.meta["limits"]

    # a cap never raises a limit: the policy's own 6 tokens and the harness's 1 turn stay
    loose = HarnessConfig(
        mcp_servers={}, max_turns=1, limits_by_level={0: {"max_turns": 3, "max_new_tokens": 50}}
    )
    (step,) = (await run_episode(object(), instance(0), WORLD, policy, loose)).steps
    assert len(step.turn.token_ids) == 6
