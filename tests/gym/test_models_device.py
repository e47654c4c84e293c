"""Where a local model runs: the `device` option of the hf policy, by default the best device here."""

from __future__ import annotations

import pytest
import torch

from core.errors import PolicyError
from gym.models.device import best_device, compute_dtype, computing, parse_device, set_compute_dtype
from gym.models.engine import Engine
from gym.policies import check_options, make_policy
from trainer.toy import build_toy_model


def test_a_device_option_is_parsed_and_defaults_to_the_best_device():
    assert parse_device(None) == best_device()
    assert parse_device("cpu") == torch.device("cpu")
    with pytest.raises(PolicyError, match="'gpu0' is not a torch device"):
        parse_device("gpu0")


def test_the_hf_policy_loads_its_model_on_the_device_asked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(Engine, "_shared", {})  # this test's engines only
    model, tokenizer = build_toy_model(0)
    tokenizer.chat_template = "{% for m in messages %}{{ m.content }} {% endfor %}"
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    check_options("hf", {"device": "cpu"})
    policy = make_policy("hf", model=str(tmp_path), device="cpu")
    assert policy.engine.device == torch.device("cpu")
    assert make_policy("hf", model=str(tmp_path)).engine.device.type == best_device().type
    for engine in Engine._shared.values():
        engine.close()


def test_a_model_marked_with_a_compute_dtype_runs_its_forward_passes_in_it():
    model, _ = build_toy_model(0)
    assert compute_dtype(model) is None
    with computing(model):
        assert model(input_ids=torch.tensor([[1, 3, 5]])).logits.dtype == torch.float32
    set_compute_dtype(model, torch.bfloat16)
    with computing(model):
        assert model(input_ids=torch.tensor([[1, 3, 5]])).logits.dtype == torch.bfloat16
