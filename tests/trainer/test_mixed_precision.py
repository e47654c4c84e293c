"""bfloat16 compute over float32 weights: one step at lr 1e-6 changes nearly every trained element.

On bfloat16 weights the same step changes about 1 % of them (an lr-1e-6 update
is far below a bfloat16 weight's precision): the run would silently not learn.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ConfigError
from gym.models.device import compute_dtype
from trainer.config import ModelConfig, build_config
from trainer.learner import Learner
from trainer.model import load_policy
from trainer.samplers.base import Request
from trainer.samplers.hf import HFSampler
from trainer.samples import Sample, TrainItem
from trainer.toy import build_toy_model

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_thread")


def _config(tmp_path, dtype="bfloat16"):
    return build_config(
        {
            "output_dir": str(tmp_path),
            "model": {"builder": "toy", "dtype": dtype},
            "rollout": {"source": "toy"},
            "optim": {"lr": 1e-6, "warmup_steps": 0},  # the first step at lr 1e-6 itself
            "loss": {"old_logprobs": "recompute"},  # ratio 1: no token is clipped out of the gradient
        }
    )


def _items() -> list[TrainItem]:
    """Items that read every id of the toy vocabulary (12) but padding's, so every embedding row that
    can learn gets a gradient."""
    return [
        TrainItem(Sample.from_turn([1, 3, 5, 4], [6, 7, 8, 9, 10, 11, 2], [0.0] * 7), 1.0, 0),
        TrainItem(Sample.from_turn([1, 3, 6, 4], [6, 6, 2], [0.0] * 3), -1.0, 1),
    ]


def _step_changes(learner: Learner, items: list[TrainItem]) -> float:
    """The share of trained elements one update changes."""
    before = [p.detach().clone() for p in learner.params]
    learner.update(items)
    changed = sum(int((p.detach() != b).sum()) for p, b in zip(learner.params, before, strict=True))
    return changed / sum(b.numel() for b in before)


def test_float32_masters_keep_an_lr_1e6_step_that_bfloat16_weights_lose(tmp_path):
    config = _config(tmp_path)
    model, tokenizer = load_policy(config.model, 0, CPU)
    assert compute_dtype(model) == torch.bfloat16
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    seen = []
    model.lm_head.register_forward_hook(lambda module, inputs, out: seen.append(out.dtype))
    assert len(tokenizer) == 12
    items = _items()

    kept = _step_changes(Learner(config, model, tokenizer), items)
    assert seen and set(seen) == {torch.bfloat16}  # the learner computed in bfloat16
    assert kept >= 0.99, f"only {kept:.2%} of the trained elements changed"

    # The contrast: the same step on the same model whose weights are bfloat16 themselves
    # (cast after the learner's check, which refuses such a model: see below).
    rounded, _ = load_policy(config.model, 0, CPU)
    learner = Learner(config, rounded, tokenizer)
    rounded.to(torch.bfloat16)
    lost = _step_changes(learner, items)
    assert lost < 0.1, f"{lost:.2%} changed on bfloat16 weights: the contrast no longer shows"


def test_a_model_with_bfloat16_trainable_weights_is_refused_by_name(tmp_path):
    model, tokenizer = build_toy_model(0)
    with pytest.raises(ConfigError, match=r"model\.embed_tokens\.weight is bfloat16") as info:
        Learner(_config(tmp_path), model.to(torch.bfloat16), tokenizer)
    assert "\n" not in str(info.value)


def test_lora_keeps_its_base_in_the_compute_dtype_and_trains_float32_adapters():
    config = ModelConfig(builder="toy", dtype="bfloat16", lora={"enabled": True})
    model, _ = load_policy(config, 0, CPU)
    trained = {p.dtype for p in model.parameters() if p.requires_grad}
    frozen = {p.dtype for p in model.parameters() if not p.requires_grad}
    assert (trained, frozen) == ({torch.float32}, {torch.bfloat16})
    assert compute_dtype(model) == torch.bfloat16


def test_the_in_process_sampler_computes_in_the_compute_dtype_too(tmp_path):
    config = _config(tmp_path)
    model, tokenizer = load_policy(config.model, 0, CPU)
    seen = []
    model.lm_head.register_forward_hook(lambda module, inputs, out: seen.append(out.dtype))
    prompt = tokenizer.convert_tokens_to_ids(["<bos>", "repeat", "red", ":"])
    (group,) = HFSampler(model, tokenizer).generate([Request(prompt, 2, 0)], config.sampling)
    assert len(group) == 2 and seen and set(seen) == {torch.bfloat16}
