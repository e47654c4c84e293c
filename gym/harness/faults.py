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


@dataclass(frozen=True)
class Fault:
    name: str
    message: str


# What each app's wrapper reports when the real thing breaks.
FAULTS: dict[str, tuple[Fault, ...]] = {
    "chat": (
        Fault(
            "chat.http_500",
            "Error: chat API request failed: HTTP 500 Internal Server Error "
            '({{"id": "app.server.internal_error", "status_code": 500}})',
        ),
        Fault(
            "chat.http_429",
            "Error: chat API request failed: HTTP 429 Too Many Requests "
            "(rate limit exceeded); Retry-After: {retry_after}",
        ),
    ),
    "office": (
        Fault(
            "office.timeout",
            "Error: LibreOffice did not respond within 30 s (soffice timed out); "
            "the document was not changed",
        ),
    ),
    "db": (
        Fault(
            "db.lock_timeout",
            "Error: canceling statement due to lock timeout (SQLSTATE 55P03: lock_not_available)",
        ),
    ),
}
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
        fault = rng.choice(FAULTS.get(server, GENERIC))
        name = fault.name if server in FAULTS else f"{server}.{fault.name}"
        message = fault.message.format(retry_after=rng.randint(1, 5), server=server)
        return Fault(name, message)
