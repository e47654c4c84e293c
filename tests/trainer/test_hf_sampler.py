"""The transformers sampler: reproducible per seed, and its logprobs are the ones the learner computes."""

import pytest
import torch

from gym.models.sampling import filter_logits
from trainer.config import SamplingConfig
from trainer.loss import token_logprobs
from trainer.samplers.base import Request, WeightUpdate
from trainer.samplers.hf import HFSampler
from trainer.toy import build_toy_model
from trainer.weights import export_weights


@pytest.fixture(scope="module")
def toy():
    torch.set_num_threads(1)
    return build_toy_model(seed=3)


def test_same_seed_same_tokens_and_logprobs_match_a_forward_pass(toy):
    model, tok = toy
    sampler = HFSampler(model, tok)
    params = SamplingConfig(temperature=0.7, max_new_tokens=6)
    prompt = tok.convert_tokens_to_ids(["<bos>", "repeat", "red", ":"])
    (a,) = sampler.generate([Request(prompt, 4, 11)], params)
    (b,) = sampler.generate([Request(prompt, 4, 11)], params)
    assert [c.token_ids for c in a] == [c.token_ids for c in b]
    assert len({tuple(c.token_ids) for c in sampler.generate([Request(prompt, 8, 12)], params)[0]}) > 1
    for completion in a:
        ids = torch.tensor([prompt + completion.token_ids])
        with torch.no_grad():
            lp = token_logprobs(model(input_ids=ids).logits, ids, temperature=0.7)[0, len(prompt) :]
        assert lp.tolist() == pytest.approx(completion.logprobs, abs=1e-4)
        ends = [i for i, t in enumerate(completion.token_ids) if t == tok.eos_token_id]
        assert ends in ([], [len(completion.token_ids) - 1])  # stops at the first end token
        assert completion.finish_reason == ("stop" if ends else "length")


def test_a_request_samples_the_same_tokens_alone_or_in_a_batch(toy):
    model, tok = toy
    sampler = HFSampler(model, tok)
    params = SamplingConfig(max_new_tokens=6)
    red = tok.convert_tokens_to_ids(["<bos>", "repeat", "red", ":"])
    blue = tok.convert_tokens_to_ids(["<bos>", "repeat", "blue", ":"])
    alone = sampler.generate([Request(blue, 3, 5)], params)[0]
    batched = sampler.generate([Request(red, 2, 4), Request(blue, 3, 5), Request([1, 3], 2, 6)], params)
    assert [c.token_ids for c in batched[1]] == [c.token_ids for c in alone]
    assert [len(group) for group in batched] == [2, 3, 2]


def test_top_k_and_top_p_filtering():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    assert torch.isinf(filter_logits(logits, 2, 1.0)).tolist() == [[False, False, True, True]]
    # nucleus 0.7: 0.5 alone is below 0.7, 0.5 + 0.3 covers it, the rest is cut
    assert torch.isinf(filter_logits(logits, 0, 0.7)).tolist() == [[False, False, True, True]]


def test_sync_from_tensors_changes_generations(toy):
    model, tok = toy
    other, _ = build_toy_model(seed=4)
    sampler = HFSampler(other, tok)
    prompt = tok.convert_tokens_to_ids(["<bos>", "repeat", "red", ":"])
    params = SamplingConfig(max_new_tokens=5)
    (before,) = sampler.generate([Request(prompt, 4, 1)], params)
    sampler.sync(WeightUpdate(version=1, tensors=export_weights(model)))
    (after,) = sampler.generate([Request(prompt, 4, 1)], params)
    (reference,) = HFSampler(model, tok).generate([Request(prompt, 4, 1)], params)
    assert [c.token_ids for c in after] == [c.token_ids for c in reference]
    assert [c.logprobs for c in after] != [c.logprobs for c in before]
    assert sampler.version == 1


def test_sampler_max_batch_bounds_how_many_requests_the_engine_decodes_at_once(toy):
    from trainer.config import build_config
    from trainer.samplers.base import build_sampler

    model, tok = toy
    config = build_config({"model": {"builder": "toy"}, "sampler": {"max_batch": 1}})
    one_at_a_time, together = build_sampler(config, tok, model), HFSampler(model, tok)
    params = SamplingConfig(temperature=0.7, max_new_tokens=6)
    prompt = tok.convert_tokens_to_ids(["<bos>", "repeat", "red", ":"])
    (alone,) = one_at_a_time.generate([Request(prompt, 4, 11)], params)
    (batched,) = together.generate([Request(prompt, 4, 11)], params)
    assert [c.token_ids for c in alone] == [c.token_ids for c in batched]
    # Each decoding step advances every request in the batch: one at a time, the steps add up.
    lengths = [len(c.token_ids) for c in alone]
    assert one_at_a_time.engine.stats["steps"] == sum(n - 1 for n in lengths)
    assert together.engine.stats["steps"] == max(lengths) - 1 < sum(n - 1 for n in lengths)
