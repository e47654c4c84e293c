"""One exception tree for control flow; every message says what, where, and what to do.

Failures *inside* the environment (a command exits 1, a tool gets bad
arguments) are not exceptions: they become observations the model reads.
"""


class EgymError(Exception):
    """Base of every error a user can act on. `str(err)` is one line."""


class ConfigError(EgymError):
    """A bad config file, override or CLI argument."""


class TaskError(EgymError):
    """A task or world definition is missing or invalid."""


class RubricError(EgymError):
    """A rubric file is missing, invalid, or references an unknown check."""


class SandboxError(EgymError):
    """Docker is unreachable, an image is missing, or a container failed to start or load its initial state."""


class JudgeError(EgymError):
    """The LLM-judge endpoint failed or answered something unusable."""


class PolicyError(EgymError):
    """A policy could not be built or its backend failed."""


class StoreError(EgymError):
    """The run store could not be opened or written."""
