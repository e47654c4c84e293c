"""The vLLM sampler over the gym's vLLM engine, against a stand-in `vllm` (tests/gym/vllm_standin.py).

vLLM cannot be installed on the machines these tests run on, so what is tested
is how the trainer drives the engine (its arguments, batching, weight updates),
never vLLM itself: that has not run.
"""

from __future__ import annotations

import gc
import json
import sys
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import load_file

from core.errors import ConfigError
from gym.policies.vllm import VLLMPolicy
from tests.gym import vllm_standin
from trainer.config import SamplingConfig, build_config
from trainer.samplers.base import Request, WeightUpdate, build_sampler
from trainer.samplers.vllm import VLLMSampler


def vllm_config(**over):
    data = {
        "seed": 7,
        "model": {"path": "Qwen/Qwen2.5-0.5B-Instruct"},
        "rollout": {"source": "toy"},
        "sampler": {"backend": "vllm"},
    }
    return build_config(data, [f"{k}={v}" for k, v in over.items()])


@pytest.fixture
def llm_class(monkeypatch):
    return vllm_standin.install(monkeypatch)


def test_the_engine_is_built_from_the_config_and_never_given_the_learner_model(llm_class):
    config = vllm_config(**{"model.lora.enabled": True, "model.lora.r": 32, "model.dtype": "bfloat16"})
    sampler = build_sampler(config, tokenizer="tok", model=object())
    assert isinstance(sampler, VLLMSampler) and sampler.tokenizer == "tok"
    (llm,) = llm_class.built
    assert llm.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert llm.engine_args == {
        "logprobs_mode": "processed_logprobs",
        "dtype": "bfloat16",
        "tensor_parallel_size": 1,
        "gpu_memory_utilization": 0.5,
        "max_model_len": None,
        "enforce_eager": False,
        "enable_prefix_caching": True,
        "enable_lora": True,
        "max_lora_rank": 32,
        "seed": 7,
        "trust_remote_code": False,
    }


def test_one_generate_is_one_batch_with_each_request_seeded(llm_class):
    sampler = build_sampler(vllm_config(), tokenizer=None)
    params = SamplingConfig(temperature=0.8, top_k=5, max_new_tokens=4)
    groups = sampler.generate([Request([1, 2, 3], 2, 11), Request([4, 5], 3, 12)], params)
    assert [len(g) for g in groups] == [2, 3]
    assert all(
        len(c.token_ids) == len(c.logprobs) == 4 and c.finish_reason == "length" for g in groups for c in g
    )
    (call,) = llm_class.built[0].calls  # both requests in one vLLM call
    assert call["prompts"] == [{"prompt_token_ids": [1, 2, 3]}, {"prompt_token_ids": [4, 5]}]
    assert [(p.n, p.seed, p.temperature, p.top_k, p.max_tokens) for p in call["params"]] == [
        (2, 11, 0.8, 5, 4),
        (3, 12, 0.8, 5, 4),
    ]
    again = sampler.generate([Request([1, 2, 3], 2, 11)], params)
    assert [c.token_ids for c in again[0]] == [c.token_ids for c in groups[0]]


def test_a_full_update_is_loaded_in_place_and_the_prefix_cache_reset(llm_class):
    sampler = build_sampler(vllm_config(), tokenizer=None)
    weights = {"model.layers.0.mlp.up_proj.weight": torch.ones(2, 2)}
    sampler.sync(WeightUpdate(version=1, tensors=weights))
    llm = llm_class.built[0]
    assert llm.worker.model_runner.model.loaded == [list(weights.items())]
    assert llm.prefix_resets == 1 and sampler.version == 1


def test_each_lora_update_is_a_new_adapter_folder_under_a_new_id(llm_class):
    sampler = build_sampler(vllm_config(**{"model.lora.enabled": True}), tokenizer=None)
    adapter = {"base_model.model.layers.0.q_proj.lora_A.weight": torch.full((4, 8), 0.5)}
    for version in (1, 2, 3):
        sampler.sync(
            WeightUpdate(version=version, tensors=adapter, lora_config={"r": 4, "peft_type": "LORA"})
        )
    sampler.generate([Request([1], 1, 0)], SamplingConfig(max_new_tokens=1))
    request = llm_class.built[0].calls[-1]["lora_request"]
    assert (request.lora_name, request.lora_int_id) == ("egym-4", 4)
    folder = sampler.adapter_root / "v3"
    assert request.lora_path == str(folder)
    assert torch.equal(
        load_file(folder / "adapter_model.safetensors")[next(iter(adapter))], next(iter(adapter.values()))
    )
    assert json.loads((folder / "adapter_config.json").read_text())["r"] == 4
    assert sorted(p.name for p in sampler.adapter_root.iterdir()) == ["v2", "v3"]  # older ones removed
    root = sampler.adapter_root
    del sampler  # nothing else holds it: its folder goes with it
    gc.collect()
    assert not root.exists()


def test_the_chat_policy_is_the_gyms_vllm_policy_on_the_same_engine(llm_class):
    tokenizer = SimpleNamespace(eos_token_id=2)
    sampler = build_sampler(vllm_config(), tokenizer=tokenizer)
    policy = sampler.chat_policy(SamplingConfig(temperature=0.9, max_new_tokens=7), seed=5)
    assert (
        isinstance(policy, VLLMPolicy) and policy.engine is sampler.engine and policy.tokenizer is tokenizer
    )
    assert (policy.sampling.temperature, policy.sampling.max_new_tokens, policy.seed) == (0.9, 7, 5)


def test_without_vllm_or_a_model_path_the_config_error_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # not installed, as on this machine
    with pytest.raises(ConfigError, match="vLLM is not installed.*use sampler.backend=hf on CPU"):
        build_sampler(vllm_config(), tokenizer=None)
    toy = build_config({"model": {"builder": "toy"}, "sampler": {"backend": "vllm"}})
    with pytest.raises(ConfigError, match="needs model.path"):
        build_sampler(toy, tokenizer=None)
