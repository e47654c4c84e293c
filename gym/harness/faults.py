"""Fault injection: some MCP tool calls fail the way the real apps fail, reproducibly.

Whether call number i of an episode fails depends only on (seed, i), so the
same seed and the same sequence of calls give the same faults. An injected
fault replaces the call (the app is not touched), so retrying is always safe,
as it is for the real failures imitated here. The trajectory records the
fault name in `ToolResult.fault`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gym.harness.config import FaultConfig
from mcp_wrappers.apps import apps


@dataclass(frozen=True)
class Fault:
    name: str
    message: str


GENERIC = (Fault("unavailable", "Error: {server} service temporarily unavailable; try again"),)


class FaultInjector:
    def __init__(self, config: FaultConfig):
        self.config = config
        self.calls = 0

    def draw(self, server: str) -> Fault | None:
        """The fault for the next MCP call to `server`, or None. Counts every MCP call."""
        index, self.calls = self.calls, self.calls + 1
        if self.config.rate <= 0 or (self.config.servers is not None and server not in self.config.servers):
            return None
        rng = random.Random(f"{self.config.seed}:{index}")
        if rng.random() >= self.config.rate:
            return None
        imitated = tuple(Fault(f.name, f.message) for f in apps()[server].faults) if server in apps() else ()
        fault = rng.choice(imitated or GENERIC)
        name = fault.name if imitated else f"{server}.{fault.name}"
        message = fault.message.format(retry_after=rng.randint(1, 5), server=server)
        return Fault(name, message)
