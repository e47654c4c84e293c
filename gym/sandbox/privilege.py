"""Who may run what in a sandbox: the agent, and everyone else under stricter rules.

The agent (OS user `agent`) is adversarial: it owns /workspace and its home and
can write /tmp. Code that runs as any other user (root, postgres, grader) must
never pick up a file the agent planted, so such a command

- names its program by absolute path (no PATH lookup),
- runs in a working directory the agent cannot write (`/` unless told),
- starts Python isolated (`-I`: no working directory, `PYTHON*` variables or
  user site-packages on sys.path).

`DockerSandbox` refuses a command that breaks these rules, and
tests/gym/test_exec_audit.py finds every call site that runs as another user.
See docs/security.md.
"""

from __future__ import annotations

import posixpath

from core.errors import SandboxError

AGENT = "agent"
# Folders the agent can write to in the image (checked against a live sandbox in the tests).
AGENT_WRITABLE = ("/workspace", "/home/agent", "/tmp", "/var/tmp", "/dev/shm", "/run/lock")
UIDS = {"root": 0, "grader": 990}


def agent_writable(path: str) -> bool:
    path = posixpath.normpath(path)
    return any(path == top or path.startswith(top + "/") for top in AGENT_WRITABLE)


def _python_isolated(argv: list[str]) -> bool:
    """True when the interpreter's own options (before -m, -c or a script) include -I."""
    for arg in argv[1:]:
        if not arg.startswith("-") or arg in ("-m", "-c"):
            return False
        if arg.startswith("-") and not arg.startswith("--") and "I" in arg[1:]:
            return True
    return False


def privileged_command(cmd: str | list[str], cwd: str | None, user: str) -> tuple[list[str], str]:
    """The argv and working directory to run `cmd` as `user` (not the agent); SandboxError if unsafe."""
    argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
    cwd = cwd or "/"
    if not argv or not argv[0].startswith("/"):
        raise SandboxError(f"refusing to run {argv[:1]} as {user}: give the program's absolute path")
    if agent_writable(cwd):
        raise SandboxError(f"refusing to run {argv[0]} as {user} in {cwd}: the agent can write there")
    if posixpath.basename(argv[0]).startswith("python") and not _python_isolated(argv):
        raise SandboxError(f"refusing to run {argv[0]} as {user} without -I (isolated mode)")
    return argv, cwd
