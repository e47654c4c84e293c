"""The clipped objective, its gradient, masking and normalisation, against hand-computed values."""

import math

import pytest
import torch

from trainer.loss import clipped_pg_loss, item_weights, token_entropy, token_logprobs
from trainer.samples import Sample, TrainItem

LN = math.log


def _loss(logp, old, adv, weights, **kw):
    logp = torch.tensor([logp], requires_grad=True)
    loss, stats = clipped_pg_loss(
        logp,
        torch.tensor([old]),
        torch.tensor([adv]),
        torch.tensor([weights]),
        clip_low=0.2,
        clip_high=0.2,
        **kw,
    )
    loss.backward()
    return loss.item(), logp.grad[0].tolist(), stats


def test_positive_advantage_clips_high_ratio():
    # ratios 1.25 and 0.5; A = +1. Token 0: min(1.25, 1.2) = 1.2 (clipped: no gradient).
    # Token 1: min(0.5, 0.8) = 0.5 (unclipped: d(-r*A)/dlogp = -r*A = -0.5). Weights 1/2 each.
    loss, grad, stats = _loss([LN(0.5), LN(0.25)], [LN(0.4), LN(0.5)], 1.0, [0.5, 0.5])
    assert loss == pytest.approx(-(1.2 + 0.5) / 2)
    assert grad == pytest.approx([0.0, -0.25])
    assert stats.tokens == 2 and stats.clipped == 1
    assert stats.means()["ratio_mean"] == pytest.approx((1.25 + 0.5) / 2)


def test_negative_advantage_clips_low_ratio():
    # A = -1. Token 0: min(-1.25, -1.2) = -1.25 (unclipped, grad of 1.25 wrt logp is r = 1.25).
    # Token 1: min(-0.5, -0.8) = -0.8 (clipped).
    loss, grad, stats = _loss([LN(0.5), LN(0.25)], [LN(0.4), LN(0.5)], -1.0, [0.5, 0.5])
    assert loss == pytest.approx((1.25 + 0.8) / 2)
    assert grad == pytest.approx([0.625, 0.0])
    assert stats.clipped == 1


def test_masked_tokens_contribute_nothing():
    # the third position is a prompt/tool token: weight 0, absurd logprobs, no loss, no gradient
    loss, grad, stats = _loss([LN(0.5), LN(0.25), 0.0], [LN(0.4), LN(0.5), -100.0], 1.0, [0.5, 0.5, 0.0])
    assert loss == pytest.approx(-0.85)
    assert grad == pytest.approx([0.0, -0.25, 0.0])
    assert stats.tokens == 2


def test_on_policy_gradient_is_minus_advantage():
    # ratio 1 everywhere: the loss gradient is -A * w per token (REINFORCE with a baseline)
    loss, grad, stats = _loss([LN(0.3), LN(0.6)], [LN(0.3), LN(0.6)], 2.0, [0.25, 0.75])
    assert loss == pytest.approx(-2.0)
    assert grad == pytest.approx([-0.5, -1.5])
    assert stats.clipped == 0 and stats.means()["kl_sampler"] == pytest.approx(0.0)


def test_kl_to_reference_k3_value_and_gradient():
    d = 0.3  # ref - logp
    logp = [LN(0.5)]
    ref = torch.tensor([[LN(0.5) + d]])
    loss, grad, stats = _loss(logp, logp, 0.0, [1.0], ref_logp=ref, kl_coef=0.1)
    k3 = math.exp(d) - d - 1
    assert loss == pytest.approx(0.1 * k3)
    assert grad == pytest.approx([0.1 * (1 - math.exp(d))])
    assert stats.means()["kl_ref"] == pytest.approx(k3)


def _item(n_model: int, trajectory: int) -> TrainItem:
    return TrainItem(Sample.from_turn([0], [1] * n_model, [0.0] * n_model), 1.0, trajectory)


def test_token_and_sequence_normalisation():
    # trajectory 0: one sample with 1 model token; trajectory 1: two samples (turns) with 1 + 2 tokens
    items = [_item(1, 0), _item(1, 1), _item(2, 1)]
    assert item_weights(items, "token") == pytest.approx([1 / 4] * 3)
    assert item_weights(items, "sequence") == pytest.approx([1 / 2, 1 / 6, 1 / 6])
    with pytest.raises(ValueError):
        item_weights(items, "batch")


def test_token_logprobs_alignment_and_temperature():
    torch.manual_seed(0)
    logits = torch.randn(1, 4, 7)
    ids = torch.tensor([[3, 1, 6, 2]])
    out = token_logprobs(logits, ids, temperature=2.0)
    assert out[0, 0] == 0.0
    for i in range(1, 4):
        expected = torch.log_softmax(logits[0, i - 1] / 2.0, dim=-1)[ids[0, i]]
        assert out[0, i].item() == pytest.approx(expected.item(), abs=1e-6)


def test_token_entropy_by_hand_and_its_mean_over_model_tokens():
    # Column i holds the entropy of the distribution token i was drawn from (logits of position i - 1).
    # Position 0: probabilities (1/2, 1/4, 1/4) at temperature 1; position 1: all-equal logits over 3.
    logits = torch.tensor([[[LN(2.0), 0.0, 0.0], [5.0, 5.0, 5.0], [9.0, -9.0, 0.0]]])
    out = token_entropy(logits)
    h0 = -(0.5 * LN(0.5) + 2 * 0.25 * LN(0.25))  # 1.5 ln 2
    assert out[0].tolist() == pytest.approx([0.0, h0, LN(3)])
    # Temperature flattens: logits (ln 2, 0, 0) at T=2 are probabilities proportional to (sqrt 2, 1, 1).
    p = torch.tensor([2**0.5, 1.0, 1.0]) / (2 + 2**0.5)
    assert token_entropy(logits, 2.0)[0, 1].item() == pytest.approx(float(-(p * p.log()).sum()))
    # The statistics sum it over model tokens only (the weight-0 column is masked out).
    zeros = torch.zeros(1, 3)
    _, stats = clipped_pg_loss(
        zeros,
        zeros,
        torch.tensor([1.0]),
        torch.tensor([[0.0, 0.5, 0.5]]),
        clip_low=0.2,
        clip_high=0.2,
        entropy=out,
    )
    assert stats.means()["entropy"] == pytest.approx((h0 + LN(3)) / 2)
