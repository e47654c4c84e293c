"""The engine, sampler and learner make every tensor on the model's device.

The model stays on the CPU while torch's default device is 'meta': a tensor
made without `device=` lands on meta, and any operation that meets it with the
model's CPU tensors fails. That is how a hard-wired CPU tensor shows on a GPU,
found without one.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.overrides import TorchFunctionMode

from gym.models.engine import Engine
from trainer.config import build_config
from trainer.learner import Learner
from trainer.samplers.base import Request
from trainer.samplers.hf import HFSampler
from trainer.samples import Sample, TrainItem
from trainer.sft import _batch_loss
from trainer.toy import build_toy_model


class _MixedDevices(TorchFunctionMode):
    """Fails an operation on a meta tensor and a real one: torch lets some through (index_select of a CPU
    tensor by a meta index returns uninitialised memory) where CUDA would refuse."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        devices = {t.device.type for t in _tensors((args, kwargs))}
        if "meta" in devices and len(devices) > 1:
            raise RuntimeError(f"{getattr(func, '__name__', func)} mixes devices {sorted(devices)}")
        return func(*args, **kwargs)


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


@contextlib.contextmanager
def _meta_default():
    with torch.device("meta"), _MixedDevices():
        yield


@pytest.fixture
def engine_thread_on_meta(monkeypatch):
    """The default device and torch function modes are per thread: the engine's own thread gets them too."""
    run = Engine._run

    def run_on_meta(self):
        with _meta_default():
            run(self)

    monkeypatch.setattr(Engine, "_run", run_on_meta)


def test_rollouts_and_an_update_make_no_tensor_off_the_model_device(tmp_path, engine_thread_on_meta):
    torch.set_num_threads(1)
    model, tokenizer = build_toy_model(0)
    config = build_config(
        {
            "output_dir": str(tmp_path),
            "model": {"builder": "toy"},
            "rollout": {"source": "toy"},
            "sampling": {"max_new_tokens": 5},
            "loss": {"old_logprobs": "recompute", "kl_coef": 0.1},
        }
    )
    learner = Learner(config, model, tokenizer)
    sampler = HFSampler(model, tokenizer)
    prompts = [tokenizer.convert_tokens_to_ids(["<bos>", "repeat", word, ":"]) for word in ("red", "blue")]

    def step() -> None:
        groups = sampler.generate([Request(p, 3, seed) for seed, p in enumerate(prompts)], config.sampling)
        items = [
            TrainItem(Sample.from_turn(p, c.token_ids, c.logprobs), advantage, g)
            for g, (p, group) in enumerate(zip(prompts, groups, strict=True))
            for c, advantage in zip(group, (1.0, -0.5, -0.5), strict=True)
        ]
        learner.update(items)
        sampler.sync(learner.weight_update(1))

    step()  # AdamW makes its step counters without a device (torch's code): they exist from here on
    with _meta_default():
        step()
    assert all(p.device.type == "cpu" for p in model.parameters())


def test_the_sft_loss_makes_no_tensor_off_the_model_device():
    model, _ = build_toy_model(0)
    with _meta_default():
        loss, tokens = _batch_loss(model, [([1, 3, 6, 6, 6], 3), ([1, 3, 7], 2)], 0, torch.device("cpu"))
        loss.backward()
    assert tokens == 3 and loss.device.type == "cpu"
