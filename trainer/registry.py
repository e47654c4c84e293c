"""Lazy `module:attribute` entry points with short names and "did you mean" errors.

Nothing is imported until a name is resolved, so choosing the transformers
sampler never imports vLLM and the CLI starts fast.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from core.errors import ConfigError

SOURCES = {
    "gym": "trainer.rollouts.gym_source:GymRolloutSource",
    "toy": "trainer.toy:ToyRolloutSource",
}
SAMPLERS = {
    "hf": "trainer.samplers.hf:HFSampler",
    "vllm": "trainer.samplers.vllm:VLLMSampler",
}
MODEL_BUILDERS = {
    "toy": "trainer.toy:build_toy_model",
}


def resolve(name: str, table: dict[str, str], what: str) -> Any:
    """The object named by a short name from `table` or by an explicit `module:attribute`."""
    target = table.get(name, name)
    if ":" not in target:
        hint = difflib.get_close_matches(name, table, n=1)
        known = ", ".join(sorted(table))
        extra = f"; did you mean '{hint[0]}'?" if hint else ""
        raise ConfigError(f"unknown {what} '{name}' (known: {known}, or module:attribute){extra}")
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what} '{name}': cannot import {module_name} ({exc})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        hint = difflib.get_close_matches(attr, [a for a in dir(module) if not a.startswith("_")], n=1)
        extra = f"; did you mean '{module_name}:{hint[0]}'?" if hint else ""
        raise ConfigError(f"{what} '{name}': {module_name} has no attribute '{attr}'{extra}") from None
