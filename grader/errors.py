"""The grader's two failure kinds when reading state (see grader.probe for why they differ)."""

from __future__ import annotations

from core.errors import EgymError


class ProbeError(EgymError):
    """The final state could not be read (infrastructure); the item is `error`."""


class StateError(Exception):
    """The final state cannot answer the question (agent-caused); the item fails with this as evidence."""
