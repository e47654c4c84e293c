"""Isolated rollout containers. `Sandbox` is the protocol; `DockerSandbox` the implementation.

`LocalSandbox` is a Docker-free fake of the same protocol for fast tests of harness,
grader and trainer logic; it isolates nothing (see gym/sandbox/local.py).
"""

from gym.sandbox.base import ExecResult, Sandbox, StdioStream
from gym.sandbox.docker_sandbox import DockerSandbox, SandboxLimits
from gym.sandbox.local import LocalSandbox

__all__ = ["DockerSandbox", "ExecResult", "LocalSandbox", "Sandbox", "SandboxLimits", "StdioStream"]
