"""The bundled real model, SmolLM2-135M-Instruct, through every path egym offers it: import, policy, engine, judge.

It is small and weak: these tests check that it runs as egym says, not that it is
good. The import itself is tested on the bundled GGUF; the other tests use the
folder `make setup` made (imported again if missing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import ConfigError, PolicyError
from core.trajectory import Message
from gym.models.engine import Engine
from gym.models.sampling import SamplingParams
from gym.models.store import BUNDLED, bundled_gguf, import_gguf, resolve_model
from gym.policies.constrained import string_cap
from gym.policies.hf import HFPolicy

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smollm2() -> Engine:
    return Engine.shared(str(resolve_model("smollm2")))


def test_the_gguf_becomes_a_folder_that_loads_with_the_same_weights(tmp_path, smollm2):
    folder = import_gguf(bundled_gguf("smollm2"), tmp_path / BUNDLED["smollm2"].folder)
    assert {p.name for p in folder.iterdir()} >= {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "generation_config.json",
    }
    from transformers import AutoModelForCausalLM

    fresh = AutoModelForCausalLM.from_pretrained(folder)
    for (name, a), (_, b) in zip(
        sorted(fresh.state_dict().items()), sorted(smollm2.model.state_dict().items()), strict=True
    ):
        assert a.shape == b.shape and bool((a == b).all()), name
    assert not list(tmp_path.glob("*.partial"))  # staged, then moved into place


def test_greedy_answer_is_coherent_and_logprobs_are_the_models(smollm2):
    tokenizer = smollm2.tokenizer
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        add_generation_prompt=True,
        tokenize=False,
    )
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    result = smollm2.generate(ids, SamplingParams(temperature=0, max_new_tokens=20))
    assert "Paris" in tokenizer.decode(result.token_ids)
    assert result.finish_reason == "stop" and all(lp <= 0 for lp in result.logprobs)


async def test_one_engine_per_process_serves_every_policy(smollm2):
    first, second = HFPolicy("smollm2"), HFPolicy(str(resolve_model("smollm2")))
    assert first.engine is smollm2 and second.engine is smollm2  # loaded once


async def test_a_forced_first_call_is_well_formed_and_names_an_offered_tool(smollm2):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "db.query",
                "description": "Run a read-only SQL query.",
                "parameters": {
                    "type": "object",
                    "properties": {"sql": {"type": "string"}},
                    "required": ["sql"],
                },
            },
        }
    ]
    messages = [
        Message(role="system", content="You are Jordan, a finance analyst."),
        Message(role="user", content="How many invoices are there?"),
    ]
    for seed, budget in ((0, 80), (1, 64), (2, 120)):
        policy = HFPolicy("smollm2", seed=seed, tool_choice="first", max_new_tokens=budget, temperature=1.0)
        turn = await policy.next(messages, tools)
        (call,) = turn.tool_calls[:1]
        assert call.error is None and call.name == "db.query"
        assert set(json.loads(call.arguments)) == {"sql"}  # no argument the tool would refuse
        # the string fits the turn's budget, so the call closes before max_new_tokens
        assert len(json.loads(call.arguments)["sql"]) <= string_cap(budget) and len(turn.token_ids) <= budget
        assert turn.token_ids[-1] in smollm2.end_ids  # the grammar ended the turn after the call


def test_not_a_model_and_a_corrupt_gguf_are_one_line_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="is not a model"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="no model 'nonesuch'.*smollm2"):
        resolve_model("nonesuch")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ConfigError, match="not a GGUF model transformers can read"):
        resolve_model(str(broken))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text('{"model_type": "llama"}')
    with pytest.raises(PolicyError, match="cannot load the model"):
        HFPolicy(str(tmp_path / "bad"))


@pytest.mark.docker
async def test_a_rollout_of_a_bundled_task_with_the_bundled_model(docker_image):
    from gym.rollout import RolloutSpec, run_rollout

    task = ROOT / "tasks" / "acme" / "collections-list"
    spec = RolloutSpec(
        run_id="pytest-model",
        rollout_id="smollm2-1",
        task="acme/collections-list",
        task_path=str(task),
        policy="hf",
        model="smollm2",
        harness={"max_turns": 3},
        policy_options={"tool_choice": "first", "seed": 1, "max_new_tokens": 160},
    )
    outcome = await run_rollout(spec)
    assert outcome.ok, outcome.error
    trajectory = outcome.trajectory
    first = trajectory.steps[0]
    assert first.turn.tool_calls and first.turn.tool_calls[0].error is None  # forced, grammar-checked
    assert first.results and first.results[0].output  # it ran in the sandbox and came back
    for step in trajectory.steps:
        assert len(step.turn.token_ids) == len(step.turn.logprobs) > 0 and step.turn.prompt_token_ids
    assert outcome.grade.possible == 30 and trajectory.model.endswith("SmolLM2-135M-Instruct")


def test_smollm2_as_a_local_judge_gives_a_verdict_or_an_item_error(tmp_path, smollm2):
    from core.trajectory import Trajectory
    from grader.judge import Judge, JudgeConfig
    from grader.probe import StaticProbe
    from grader.rubric import Rubric
    from grader.score import grade
    from gym.models.judge_backend import generate_locally

    rubric = Rubric.model_validate(
        {
            "task": "w/t",
            "items": [
                {
                    "id": "polite",
                    "description": "The reply is polite",
                    "kind": "judge",
                    "points": 2,
                    "prompt": "Is the final answer polite?",
                    "evidence": [{"type": "final_answer"}],
                },
                {
                    "id": "says-42",
                    "description": "Says 42",
                    "kind": "python",
                    "points": 1,
                    "check": "transcript.final_answer_contains",
                    "args": {"text": "42"},
                },
            ],
        }
    )
    trajectory = Trajectory(task="w/t", policy="p", final_answer="Thank you! The total is 42.")
    judge = Judge(
        JudgeConfig(model="hf:smollm2", cache_dir=tmp_path / "cache", max_tokens=96), local=generate_locally
    )
    result = grade(rubric, StaticProbe(), trajectory, judge=judge)
    polite, says = result.items
    assert says.status == "pass"  # the deterministic item is graded whatever the judge does
    assert polite.status in ("pass", "fail") or (polite.status == "error" and polite.error)
    assert judge.calls >= 1
