"""The trainer's plugins by short name (core.plugins): rollout sources, samplers, model builders.

Nothing is imported until a name is resolved, so choosing the transformers
sampler never imports vLLM and the CLI starts fast. Other packages add their
own through the entry-point groups named below.
"""

from __future__ import annotations

from core.plugins import Registry

SOURCES = Registry("rollout source", "egym.rollout_sources")
SOURCES.register("gym", "trainer.rollouts.gym_source:GymRolloutSource")
SOURCES.register("toy", "trainer.toy:ToyRolloutSource")

SAMPLERS = Registry("sampler backend", "egym.samplers")
SAMPLERS.register("hf", "trainer.samplers.hf:HFSampler", extra="train")
SAMPLERS.register("vllm", "trainer.samplers.vllm:VLLMSampler", extra="gpu")

MODEL_BUILDERS = Registry("model builder", "egym.model_builders")
MODEL_BUILDERS.register("toy", "trainer.toy:build_toy_model")
