"""The harness: a Claude-Code-like agent loop around a policy, with tools that act inside the sandbox.

    from gym.harness import HarnessConfig, run_episode
    trajectory = await run_episode(sandbox, task, world, policy, HarnessConfig(max_turns=20))

Names are resolved lazily so importing a submodule stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "run_episode": "gym.harness.loop",
    "HarnessConfig": "gym.harness.config",
    "ContextConfig": "gym.harness.config",
    "FaultConfig": "gym.harness.config",
    "Toolbox": "gym.harness.toolbox",
    "system_prompt": "gym.harness.prompt",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'gym.harness' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
