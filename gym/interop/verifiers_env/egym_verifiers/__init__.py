"""egym as a verifiers environment (id `egym-verifiers`): tasks, episodes and rewards from a
running `egym serve-env --protocol ors`. verifiers finds the taskset, its env and its
harness through `__all__`."""

from egym_verifiers.taskset import (
    EgymConfig,
    EgymData,
    EgymEnv,
    EgymHarness,
    EgymTask,
    EgymTaskset,
    load_environment,
)
from egym_verifiers.toolset import EgymState, EgymToolset

__all__ = [
    "EgymConfig",
    "EgymData",
    "EgymEnv",
    "EgymHarness",
    "EgymState",
    "EgymTask",
    "EgymTaskset",
    "EgymToolset",
    "load_environment",
]
