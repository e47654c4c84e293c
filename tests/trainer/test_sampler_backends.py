"""The one sampler seam: a backend says whether it shares the learner's model, and every caller asks it.

The plugin backends below are named by `module:Class`, as a user's would be.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ConfigError
from tests.trainer.test_learning import toy_config
from trainer.local import build_trainer
from trainer.samplers.base import SamplerBackend, build_sampler, sampler_backend
from trainer.samplers.hf import HFSampler
from trainer.samplers.vllm import VLLMSampler

HERE = "tests.trainer.test_sampler_backends"


class SharingPlugin(HFSampler):
    """A plugin on the transformers engine that counts its weight syncs."""

    shares_model = True
    syncs: list[bool] = []  # per sync: whether the update was the learner's own module (nothing copied)

    def sync(self, update):
        SharingPlugin.syncs.append(update.model is self.model)
        super().sync(update)


class OwnEnginePlugin:
    """A plugin that builds its own engine from the config, as vLLM does."""

    shares_model = False

    def __init__(self, config, tokenizer, model):
        self.config, self.tokenizer, self.model = config, tokenizer, model

    @classmethod
    def build(cls, config, tokenizer, model):
        return cls(config, tokenizer, model)


class Undeclared:
    def __init__(self, model, tokenizer):
        pass


def test_a_plugin_that_shares_the_model_samples_with_the_learners_own(tmp_path):
    torch.set_num_threads(1)
    SharingPlugin.syncs.clear()
    config = toy_config(
        tmp_path, steps=1, **{"sampler.backend": f"{HERE}:SharingPlugin", "checkpoint.interval": 0}
    )
    trainer = build_trainer(config)
    sampler = trainer.rollouts.sampler
    assert isinstance(sampler, SharingPlugin) and sampler.model is trainer.learner.learner.model
    (record,) = trainer.run()
    assert record["step"] == 1 and SharingPlugin.syncs == [True]


def test_a_plugin_with_its_own_engine_is_never_handed_the_model(tmp_path):
    config = toy_config(tmp_path, **{"sampler.backend": f"{HERE}:OwnEnginePlugin"})
    sampler = build_trainer(config).rollouts.sampler
    assert isinstance(sampler, OwnEnginePlugin) and sampler.model is None and sampler.config is config


def test_the_built_in_backends_declare_themselves(tmp_path):
    assert isinstance(HFSampler, SamplerBackend) and isinstance(VLLMSampler, SamplerBackend)
    assert sampler_backend(toy_config(tmp_path)) is HFSampler and HFSampler.shares_model
    assert sampler_backend(toy_config(tmp_path, **{"sampler.backend": "vllm"})) is VLLMSampler
    assert not VLLMSampler.shares_model  # so under Ray it runs in SamplerServers


def test_a_backend_that_does_not_declare_itself_or_lacks_its_model_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"Undeclared' must declare `shares_model` \(a bool\) and a `build"):
        sampler_backend(toy_config(tmp_path, **{"sampler.backend": f"{HERE}:Undeclared"}))
    with pytest.raises(ConfigError, match="'hf' shares the policy model; build it where one is loaded"):
        build_sampler(toy_config(tmp_path), tokenizer=None)
    with pytest.raises(ConfigError, match="unknown sampler backend 'hff'; did you mean 'hf'"):
        sampler_backend(toy_config(tmp_path, **{"sampler.backend": "hff"}))
