"""The in-process inference engine on a tiny random model: batching, prefix reuse and stopping change nothing.

Continuous batching pads sequences of different lengths into one batch and
reuses cached prefixes; none of that may change what a request samples or the
logprobs it reports (up to float rounding). No Docker, no download.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import random
import threading
import time

import pytest
import torch

from core.errors import PolicyError
from gym.models.engine import Engine
from gym.models.sampling import SamplingParams
from trainer.loss import token_logprobs
from trainer.toy import build_toy_model

PARAMS = SamplingParams(temperature=0.9, top_p=1.0, max_new_tokens=12)


@pytest.fixture(scope="module")
def toy():
    torch.set_num_threads(1)
    model, tokenizer = build_toy_model(seed=5, layers=2)
    model.config.max_position_embeddings = 256
    return model, tokenizer


def prompts(tokenizer, n: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    words = [t for t in tokenizer.get_vocab() if not t.startswith("<")]
    return [
        tokenizer.convert_tokens_to_ids(["<bos>", "repeat", *rng.choices(words, k=rng.randint(1, 30)), ":"])
        for _ in range(n)
    ]


def forward_logprobs(model, prompt, tokens, temperature):
    ids = torch.tensor([prompt + tokens])
    with torch.no_grad():
        return token_logprobs(model(input_ids=ids).logits, ids, temperature=temperature)[
            0, len(prompt) :
        ].tolist()


def test_concurrent_requests_sample_what_they_would_alone(toy):
    model, tokenizer = toy
    batch = prompts(tokenizer, 6)
    alone = Engine(model, tokenizer, cache_bytes=0)
    expected = [alone.generate(p, PARAMS, seed=i) for i, p in enumerate(batch)]
    together = Engine(model, tokenizer, cache_bytes=0, max_batch=4)
    requests = [together.submit(p, PARAMS, seed=i) for i, p in enumerate(batch)]  # joins and leaves mid-run
    got = [r.future.result(timeout=60) for r in requests]
    assert [g.token_ids for g in got] == [e.token_ids for e in expected]
    for generation, prompt in zip(got, batch, strict=True):
        assert generation.logprobs == pytest.approx(
            forward_logprobs(model, prompt, generation.token_ids, 0.9), abs=1e-4
        )
    assert together.stats["steps"] < sum(len(g.token_ids) for g in got)  # several rows per step


def test_a_cached_prefix_is_reused_and_changes_nothing(toy):
    model, tokenizer = toy
    (prompt,) = prompts(tokenizer, 1, seed=3)
    engine = Engine(model, tokenizer)
    first = engine.generate(prompt, PARAMS, seed=1)
    longer = prompt + first.token_ids[:-1] + tokenizer.convert_tokens_to_ids(["repeat", ":"])
    reused = engine.generate(longer, PARAMS, seed=2)
    cold = Engine(model, tokenizer, cache_bytes=0).generate(longer, PARAMS, seed=2)
    assert reused.cached_tokens >= len(prompt) and cold.cached_tokens == 0
    assert reused.token_ids == cold.token_ids
    assert reused.logprobs == pytest.approx(cold.logprobs, abs=1e-4)
    engine.reload()  # new weights: nothing cached may be reused
    assert engine.generate(longer, PARAMS, seed=2).cached_tokens == 0


def no_end(tokenizer):
    def processor(generated, logits):
        logits = logits.clone()
        logits[tokenizer.eos_token_id] = float("-inf")
        return logits

    return processor


def test_stop_strings_end_tokens_and_max_tokens(toy):
    model, tokenizer = toy
    (prompt,) = prompts(tokenizer, 1, seed=4)
    engine = Engine(model, tokenizer)
    long = PARAMS.model_copy(update={"max_new_tokens": 40})
    free = engine.generate(prompt, long, seed=7, processor=no_end(tokenizer))
    assert free.finish_reason == "length" and len(free.token_ids) == 40
    word = tokenizer.convert_ids_to_tokens(free.token_ids)[4]
    first = next(i for i in range(40) if word in tokenizer.decode(free.token_ids[: i + 1]))
    stopped = engine.generate(
        prompt, long.model_copy(update={"stop": (word,)}), seed=7, processor=no_end(tokenizer)
    )
    assert stopped.finish_reason == "stop" and stopped.token_ids == free.token_ids[: first + 1]
    ended = engine.generate(prompt, long, seed=7)  # without the processor the model may end on its own
    if ended.finish_reason == "stop":
        assert ended.token_ids[-1] == tokenizer.eos_token_id  # the end token is kept: the model chose it
    short = engine.generate(
        prompt, PARAMS.model_copy(update={"max_new_tokens": 3}), seed=7, processor=no_end(tokenizer)
    )
    assert len(short.token_ids) == 3 and short.finish_reason == "length"


def test_a_stopped_request_hands_back_what_it_has(toy):
    model, tokenizer = toy
    (prompt,) = prompts(tokenizer, 1, seed=6)
    engine = Engine(model, tokenizer)
    started = threading.Event()
    blocked = no_end(tokenizer)

    def never_end(generated, logits):  # and tells us it is running
        started.set()
        return blocked(generated, logits)

    request = engine.submit(prompt, PARAMS.model_copy(update={"max_new_tokens": 10_000}), processor=never_end)
    assert started.wait(30)
    engine.stop(request)
    result = request.future.result(timeout=30)
    assert result.finish_reason == "cancelled" and 0 < len(result.token_ids) == len(result.logprobs)


def test_bad_requests_are_refused_in_one_line(toy):
    model, tokenizer = toy
    engine = Engine(model, tokenizer)
    with pytest.raises(PolicyError, match="empty prompt"):
        engine.submit([], PARAMS)
    with pytest.raises(PolicyError, match="reads at most 256"):
        engine.submit([1] * 300, PARAMS)
    engine.close()
    with pytest.raises(PolicyError, match="closed"):
        engine.submit([1, 2], PARAMS)


def test_at_exit_every_engine_stops_mid_generation_and_its_thread_ends(toy, monkeypatch):
    # A daemon engine thread still inside a torch step when the interpreter ends aborted
    # `egym calibrate` after its work was done (exit -6, "terminate called without an active
    # exception"): the exit hook stops each engine's thread first.
    import weakref

    from gym.models import engine as engines

    monkeypatch.setattr(engines, "_running", weakref.WeakSet())  # other tests' engines keep running
    model, tokenizer = toy
    engine = Engine(model, tokenizer)
    assert set(engines._running) == {engine}
    # No end token: a request whose first sampled token ends it never reaches a decoding step, and
    # the loop below would wait for one for ever (it did, once in a fresh clone).
    long = PARAMS.model_copy(update={"max_new_tokens": 200})
    request = engine.submit(prompts(tokenizer, 1)[0], long, processor=no_end(tokenizer))
    while not engine.stats["steps"]:
        time.sleep(0.01)
    engines._close_engines()
    assert not engine._thread.is_alive()
    assert request.future.done()


def test_a_request_near_the_window_stops_at_it(toy):
    model, tokenizer = toy
    engine = Engine(model, tokenizer)
    result = engine.generate([1] * 250, PARAMS.model_copy(update={"max_new_tokens": 100}), seed=1)
    assert len(result.token_ids) <= 6 and result.finish_reason in ("stop", "length")


def test_many_threads_submitting_at_once(toy):
    model, tokenizer = toy
    engine = Engine(model, tokenizer, max_batch=3)
    batch = prompts(tokenizer, 12, seed=9)
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda i: engine.generate(batch[i], PARAMS, seed=i), range(12)))
    assert all(r.token_ids and len(r.token_ids) == len(r.logprobs) for r in results)
    assert engine.stats["requests"] == 12


def _first_batch(engine: Engine, batch, *, together: bool) -> int:
    """How many requests the engine's first decoding step ran, when they are submitted slowly."""
    sizes = []
    step = engine._step
    engine._step = lambda: (sizes.append(len(engine._rows)), step())[1]
    submitting = engine.together() if together else contextlib.nullcontext()
    with submitting:
        requests = []
        for i, prompt in enumerate(batch):
            requests.append(engine.submit(prompt, PARAMS, seed=i))
            time.sleep(0.05)  # a busy machine: the engine thread runs between two submits
    for request in requests:
        request.future.result(timeout=60)
    engine.close()
    return sizes[0]


def test_requests_submitted_together_start_as_one_batch(toy):
    # What makes a training step's samples the same on every run: the batch's shape (and so the
    # rounding of its matmuls) must not depend on how the two threads were scheduled.
    model, tokenizer = toy
    batch = prompts(tokenizer, 5)
    assert _first_batch(Engine(model, tokenizer, cache_bytes=0), batch, together=True) == 5
    assert _first_batch(Engine(model, tokenizer, cache_bytes=0), batch, together=False) < 5
