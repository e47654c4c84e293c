"""What the learner reports about its drift: KL to the starting policy and entropy, whatever kl_coef is,
and the learning rate of its linear warm-up. Tiny random Llama (trainer.toy), CPU, a few updates each."""

from __future__ import annotations

import pytest
import torch

from trainer.config import build_config
from trainer.learner import Learner, combine_stats
from trainer.model import load_policy
from trainer.samples import Sample, TrainItem

CPU = torch.device("cpu")


pytestmark = pytest.mark.usefixtures("one_thread")


def _learner(tmp_path, **over) -> Learner:
    config = build_config(
        {"output_dir": str(tmp_path), "model": {"builder": "toy"}, "rollout": {"source": "toy"}},
        [f"{key}={value}" for key, value in over.items()],
    )
    model, tokenizer = load_policy(config.model, 0, CPU)
    return Learner(config, model, tokenizer)


def _items() -> list[TrainItem]:
    """Two trajectories of the toy vocabulary, one rewarded and one not; the second has two model turns
    with a tool result (masked) between them."""
    return [
        TrainItem(Sample.from_turn([1, 3, 5, 4], [5, 5, 5, 2], [0.0] * 4), 1.0, 0),
        TrainItem(Sample([1, 3, 6, 4, 7, 9, 8, 2], [0, 0, 0, 0, 1, 0, 1, 1], [0.0] * 8), -1.0, 1),
    ]


def _update(learner: Learner) -> dict[str, float]:
    return combine_stats([learner.update(_items())])


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_kl_to_the_start_is_zero_until_an_update_and_grows_after_it_with_kl_coef_0(tmp_path, lora):
    learner = _learner(
        tmp_path,
        **{"loss.kl_coef": 0.0, "loss.old_logprobs": "recompute", "optim.lr": 0.05, "optim.warmup_steps": 0},
        **{"model.lora.enabled": lora, "model.lora.r": 4},
    )
    assert (learner.reference is None) == lora  # LoRA: the adapter switched off; a full fine-tune: a copy
    first = _update(learner)  # measured before its own optimizer step: the policy is still the start
    assert first["kl_ref"] == pytest.approx(0.0, abs=1e-9)
    second = _update(learner)
    third = _update(learner)
    assert 0 < second["kl_ref"] < third["kl_ref"]  # the same push again: further from the start


def test_entropy_is_the_policys_next_token_entropy_averaged_over_the_model_tokens(tmp_path):
    learner = _learner(tmp_path, **{"sampling.temperature": 0.7})
    expected = []
    with torch.no_grad():  # each sequence on its own, full logits, by the textbook formula
        for item in _items():
            ids = torch.tensor([item.sample.token_ids])
            logits = learner.model(input_ids=ids).logits[0] / 0.7
            for i, trained in enumerate(item.sample.mask):
                if trained:
                    p = torch.softmax(logits[i - 1], dim=-1)
                    expected.append(float(-(p * p.log()).sum()))
    stats = _update(learner)
    assert stats["entropy"] > 0
    assert stats["entropy"] == pytest.approx(sum(expected) / len(expected), rel=1e-5)
    assert stats["tokens_model"] == len(expected) == 7


def test_warmup_ramps_the_lr_linearly_from_0_to_the_configured_rate(tmp_path):
    learner = _learner(tmp_path, **{"optim.lr": 0.01, "optim.warmup_steps": 4})
    used = [_update(learner)["lr"] for _ in range(6)]
    assert used == pytest.approx([0.0025, 0.005, 0.0075, 0.01, 0.01, 0.01])
    # and the optimizer really stepped at those rates: the next one is the configured rate
    assert learner.optimizer.param_groups[0]["lr"] == pytest.approx(0.01)
    flat = _learner(tmp_path, **{"optim.lr": 0.01, "optim.warmup_steps": 0})
    assert [_update(flat)["lr"] for _ in range(2)] == pytest.approx([0.01, 0.01])


def test_warmup_counts_optimizer_steps_and_resumes_from_the_scheduler_state(tmp_path):
    # two mini-batches: two optimizer steps per update; the step reports the rate of its last one
    learner = _learner(tmp_path, **{"optim.lr": 0.01, "optim.warmup_steps": 4, "update.mini_batches": 2})
    assert _update(learner)["lr"] == pytest.approx(0.005)
    state = learner.state_dict()
    again = _learner(tmp_path, **{"optim.lr": 0.01, "optim.warmup_steps": 4, "update.mini_batches": 2})
    again.load_state_dict(state)
    assert _update(again)["lr"] == pytest.approx(0.01)
