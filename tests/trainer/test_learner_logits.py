"""The learner asks the model for logits only from the batch's first trained token on, and loses nothing by it."""

from __future__ import annotations

import pytest
import torch

from trainer.batching import collate
from trainer.config import build_config
from trainer.learner import Learner, first_scored
from trainer.loss import token_logprobs
from trainer.samples import Sample, TrainItem
from trainer.toy import build_toy_model


def _learner(tmp_path, model, tokenizer) -> Learner:
    config = build_config(
        {
            "output_dir": str(tmp_path),
            "model": {"builder": "toy"},
            "rollout": {"source": "toy"},
            "sampling": {"temperature": 0.7},
        }
    )
    return Learner(config, model, tokenizer)


def _batch():
    # prompts of different lengths, one with a tool result (masked) between two model turns
    items = [
        TrainItem(Sample.from_turn([1, 5, 6, 7, 8, 9], [10, 11, 3], [0.0] * 3), 1.0, 0),
        TrainItem(Sample.from_turn([1, 5, 6, 7], [4, 2], [0.0] * 2), -1.0, 1),
        TrainItem(Sample([1, 5, 6, 7, 8, 10, 9, 11, 2], [0, 0, 0, 0, 0, 1, 0, 1, 1], [0.0] * 9), 0.5, 2),
    ]
    return items, collate(items, [0.25] * len(items), 0, "cpu")


def test_first_scored_column():
    weights = torch.tensor([[0, 0, 0, 1.0, 1.0], [0, 0, 1.0, 0, 0]])
    assert first_scored(weights) == 2
    assert first_scored(torch.zeros(2, 5)) == 4  # nothing scored: only the last column is asked for
    assert first_scored(torch.zeros(1, 1)) == 1


def test_logprobs_match_full_logits_on_every_trained_token(tmp_path):
    model, tokenizer = build_toy_model(0)
    learner = _learner(tmp_path, model, tokenizer)
    _, batch = _batch()
    assert learner._keeps_logits  # a transformers Llama takes logits_to_keep
    seen: list[int] = []
    hook = model.lm_head.register_forward_hook(lambda m, i, out: seen.append(out.shape[1]))
    got = learner._logprobs(batch)
    hook.remove()
    full = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    want = token_logprobs(full, batch.input_ids, 0.7)
    scored = batch.weights != 0
    assert seen == [batch.input_ids.shape[1] - 3]  # first model token at column 4: logits from column 3 on
    assert got.shape == want.shape
    torch.testing.assert_close(got[scored], want[scored], rtol=1e-5, atol=1e-6)
    assert torch.all(got[:, :4] == 0)


def test_models_without_logits_to_keep_still_get_every_position(tmp_path):
    model, tokenizer = build_toy_model(0)

    class Plain(torch.nn.Module):  # a builder's model whose forward takes no logits_to_keep
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, use_cache=False):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, use_cache=use_cache)

    learner = _learner(tmp_path, Plain(model), tokenizer)
    assert not learner._keeps_logits
    items, batch = _batch()
    want = token_logprobs(model(input_ids=batch.input_ids).logits, batch.input_ids, 0.7)
    got = learner._logprobs(batch)
    torch.testing.assert_close(got[batch.weights != 0], want[batch.weights != 0], rtol=1e-5, atol=1e-6)
    learner.update(items)  # the update runs end to end on it


@pytest.fixture(autouse=True)
def _threads():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("checkpointing", [False, True])
def test_gradient_checkpointing_recomputes_layers_even_from_an_eval_mode_model(tmp_path, checkpointing):
    from trainer.model import load_policy

    config = build_config(
        {
            "output_dir": str(tmp_path),
            "model": {"builder": "toy", "gradient_checkpointing": checkpointing},
            "rollout": {"source": "toy"},
        }
    )
    model, tokenizer = load_policy(config.model, 0)
    model.eval()  # as from_pretrained returns it
    learner = Learner(config, model, tokenizer)
    calls, mlp = [], model.model.layers[0].mlp
    forward = mlp.forward
    mlp.forward = lambda *a, **kw: calls.append(1) or forward(*a, **kw)  # hooks do not see a recompute
    items, _ = _batch()
    model.eval()  # the sampler may switch it between updates
    learner.update(items)
    assert len(calls) == (2 if checkpointing else 1)  # checkpointing runs the layer again in backward
    assert model.training is checkpointing
