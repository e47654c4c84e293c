"""Isolated rollout containers. `Sandbox` is the protocol; `DockerSandbox` the implementation.

Tests run the harness without Docker on tests/fakes/local_sandbox.py's `LocalSandbox`.
"""

from gym.sandbox.base import ExecResult, Sandbox, StdioStream
from gym.sandbox.docker_sandbox import DockerSandbox, SandboxLimits

__all__ = ["DockerSandbox", "ExecResult", "Sandbox", "SandboxLimits", "StdioStream"]
