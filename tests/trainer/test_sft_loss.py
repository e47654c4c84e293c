"""The SFT loss: left-padded, vocabulary projection on the completion positions only, same value as the plain one."""

import random

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from trainer.sft import _batch_loss, _micro_batches, _sequences


def _plain_loss(model, batch, pad):
    """Right padding, logits everywhere: the textbook masked cross-entropy."""
    width = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), width), pad)
    labels = torch.full((len(batch), width), -100)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, (x, start) in enumerate(batch):
        ids[row, : len(x)] = torch.tensor(x)
        labels[row, start : len(x)] = torch.tensor(x[start:])
        attention[row, : len(x)] = 1
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1]
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100, reduction="sum"
    )


def _tiny_model():
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4
    )
    return LlamaForCausalLM(config).eval()


def test_the_kept_logits_loss_and_its_gradient_equal_the_plain_ones():
    model = _tiny_model()
    rng = random.Random(1)
    batch = [([rng.randrange(1, 97) for _ in range(n)], start) for n, start in ((30, 22), (41, 37), (25, 10))]
    plain = _plain_loss(model, batch, pad=0)
    plain.backward()
    expected = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    kept, tokens = _batch_loss(model, batch, 0, torch.device("cpu"))
    kept.backward()
    assert tokens == (30 - 22) + (41 - 37) + (25 - 10)  # every completion token is a target
    assert kept.item() == pytest.approx(plain.item(), rel=1e-5)
    for got, want in zip((p.grad for p in model.parameters()), expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


def test_a_long_prompt_loses_its_oldest_tokens_and_keeps_the_completion():
    examples = [
        {"prompt_ids": list(range(100)), "completion_ids": [7, 8, 9]},
        {"prompt_ids": [1], "completion_ids": []},
    ]
    ((ids, start),) = _sequences(examples, max_length=10)
    assert ids == [93, 94, 95, 96, 97, 98, 99, 7, 8, 9] and start == 7


def test_a_steps_rows_go_into_passes_of_like_length_with_the_same_gradient():
    rng = random.Random(2)
    batch = [([rng.randrange(1, 97) for _ in range(n)], n - 3) for n in (40, 9, 60, 35, 10, 58, 38, 8)]
    passes = _micro_batches(batch, 4)
    assert sorted(row for rows in passes for row in rows) == sorted(batch)  # every row once
    padded = sum(max(len(ids) for ids, _ in rows) * len(rows) for rows in passes)
    assert padded == 4 * 35 + 4 * 60  # in the given order the passes would hold 4 * 60 + 4 * 58

    def gradient(groups):
        model = _tiny_model()
        for rows in groups:
            _batch_loss(model, rows, 0, torch.device("cpu"))[0].backward()
        return [p.grad for p in model.parameters()]

    for got, want in zip(gradient(passes), gradient([batch[:4], batch[4:]]), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


def test_a_token_budget_gives_long_rows_smaller_passes():
    batch = [([1] * n, n - 1) for n in (10, 200, 12, 90, 11, 100, 95, 9)]
    passes = _micro_batches(batch, 4, max_tokens=200)
    assert [[len(ids) for ids, _ in rows] for rows in passes] == [[9, 10, 11, 12], [90, 95], [100], [200]]
    assert all(len(rows) * max(len(ids) for ids, _ in rows) <= 200 for rows in passes)
    assert _micro_batches(batch, 4, max_tokens=None) == _micro_batches(batch, 4)  # rows alone bound them
    assert [len(rows) for rows in _micro_batches(batch, 4, max_tokens=150)][-1] == 1  # too long: alone
