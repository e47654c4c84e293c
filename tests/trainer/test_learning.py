"""A tiny transformer learns the toy task with this trainer, and a resumed run matches exactly.

The model (a 2-layer Llama, hidden 32) and its word-level tokenizer are built
from a config in process: nothing is downloaded. The reward is rubric-style
(checks worth points, normalised); never stopping caps it at 0.67, so 0.8
requires learning the whole answer.
"""

from __future__ import annotations

import shutil

import pytest
import torch

from trainer.config import build_config
from trainer.local import build_trainer

TIME_KEYS = {"time_rollout", "time_update", "time_sync", "time_step", "update_tokens_per_s"}


@pytest.fixture(autouse=True)
def _threads():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def toy_config(out, **over):
    data = {
        "seed": 0,
        "steps": 100,
        "output_dir": str(out),
        "model": {"builder": "toy"},
        "rollout": {"source": "toy", "group_size": 16, "tasks_per_step": 6},
        "sampling": {"max_new_tokens": 4},
        "optim": {"lr": 0.003, "warmup_steps": 0},  # as trainer/configs/toy.yaml
        "update": {"micro_batch_size": 96},
        "checkpoint": {"interval": 50},
    }
    return build_config(data, [f"{k}={v}" for k, v in over.items()])


def _strip(records):
    return [{k: v for k, v in r.items() if k not in TIME_KEYS} for r in records]


def _same(records):
    """`records` without timings, floats to 1e-6 (rewards, counts and pass rates exactly: the sampled
    rollouts must be the same, however busy the machine; see Engine.together)."""
    return [
        {k: pytest.approx(v, rel=1e-6, abs=1e-8) if isinstance(v, float) else v for k, v in r.items()}
        for r in _strip(records)
    ]


def _moving_mean(values, window=5):
    return [sum(values[i - window : i]) / window for i in range(window, len(values) + 1)]


@pytest.mark.slow
def test_tiny_model_learns_and_resumes_exactly(tmp_path):
    first = build_trainer(toy_config(tmp_path / "a")).run()
    rewards = [r["reward_mean"] for r in first]
    assert len(first) == 100
    assert rewards[0] < 0.3, f"a random model should start low, got {rewards[0]}"
    assert max(_moving_mean(rewards)) >= 0.8, f"did not learn: {rewards[::10]}"
    assert all(r["tokens_model"] for r in first if r["groups_kept"])
    assert sum(r["groups_zero_variance"] for r in first) > 0  # late groups all-correct: dropped and counted

    # Resume a fresh trainer from the mid-run checkpoint: the remaining steps must be identical.
    resumed_cfg = toy_config(
        tmp_path / "b", **{"checkpoint.resume": str(tmp_path / "a/checkpoints/step-000050")}
    )
    second = build_trainer(resumed_cfg).run()
    assert [r["step"] for r in second] == list(range(51, 101))
    assert _strip(second) == _same(first[50:])


def test_resume_auto_continues_an_interrupted_run(tmp_path):
    # A run stopped after step 4 (steps=4), then restarted with steps=6: same as one 6-step run.
    build_trainer(toy_config(tmp_path / "a", steps=4, **{"checkpoint.interval": 2})).run()
    continued = build_trainer(toy_config(tmp_path / "a", steps=6, **{"checkpoint.interval": 2})).run()
    straight = build_trainer(toy_config(tmp_path / "b", steps=6, **{"checkpoint.interval": 2})).run()
    assert _strip(continued) == _same(straight)
    assert len(continued) == 6


def test_lora_with_kl_trains_and_resumes(tmp_path):
    over = {
        "steps": 4,
        "checkpoint.interval": 2,
        "model.lora.enabled": True,
        "model.lora.r": 4,
        "loss.kl_coef": 0.1,
        "loss.normalization": "sequence",
        "update.mini_batches": 2,
        "update.micro_batch_size": 16,
        "optim.lr": 0.01,
    }
    first = build_trainer(toy_config(tmp_path / "a", **over)).run()
    assert (tmp_path / "a/checkpoints/step-000004/model/adapter_model.safetensors").is_file()
    # mini_batches=2: the second optimizer step is off-policy, so KL to the reference becomes non-zero
    assert any(r["kl_ref"] and r["kl_ref"] > 0 for r in first)
    shutil.rmtree(tmp_path / "a/checkpoints/step-000004")
    again = build_trainer(toy_config(tmp_path / "a", **over)).run()
    assert _strip(again) == _same(first)
