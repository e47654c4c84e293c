"""Every command the host runs in a sandbox as anyone but the agent, found in the source and checked.

The agent can write /workspace, its home and /tmp; a command run as root, postgres
or grader must not be able to pick up anything planted there (docs/security.md).
The scan finds each `.exec(...)` / `.open_stdio(...)` call with a `user=` other than
the agent, resolves its command to the module constant it names, and holds it to
gym.sandbox.privilege's rules; DockerSandbox enforces the same rules at run time.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from core.errors import SandboxError
from gym.sandbox.privilege import AGENT_WRITABLE, agent_writable, privileged_command

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gym", "grader", "trainer", "bench")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


ARGUMENT = "<argument>"  # a value known only at run time (a path, a database name)


def _constant(module: str, node: ast.expr) -> object:
    """The value a call argument names: a module-level constant, or a list built from constants.

    Inside a list, a local variable stands for a run-time argument (ARGUMENT); the
    program and the interpreter's options must still be constants.
    """
    if isinstance(node, ast.Name):
        return getattr(importlib.import_module(module), node.id, ARGUMENT)
    if isinstance(node, ast.List | ast.Tuple):
        out: list = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                value = _constant(module, element.value)
                out.extend([ARGUMENT] if value == ARGUMENT else value)
            elif isinstance(element, ast.Constant):
                out.append(element.value)
            else:
                out.append(_constant(module, element) if isinstance(element, ast.Name) else ARGUMENT)
        return out
    if isinstance(node, ast.Constant):
        return node.value
    raise AssertionError(
        f"{module}: a privileged command must be built from constants, not {ast.unparse(node)}"
    )


def _commands(module: str, tree: ast.Module, call: ast.Call) -> list[object]:
    """The command(s) a call runs; when it passes on a parameter of its function, what the
    callers pass, followed through any helpers that pass it on in turn."""
    node = call.args[0]
    function = next(
        (
            f
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.lineno <= call.lineno <= (f.end_lineno or 0)
        ),
        None,
    )
    params = [a.arg for a in function.args.args] if function else []
    if not (isinstance(node, ast.Name) and node.id in params):
        return [_constant(module, node)]
    index = params.index(node.id) - (1 if params[:1] == ["self"] else 0)
    callers = [
        c
        for c in ast.walk(tree)
        if isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", None)) == function.name
    ]
    assert callers, f"{module}: {function.name} runs its parameter {node.id} but nothing here calls it"
    commands: list[object] = []
    for caller in callers:
        passed = ast.Call(func=caller.func, args=caller.args[index:], keywords=[])
        ast.copy_location(passed, caller)
        commands.extend(_commands(module, tree, passed))
    return commands


def privileged_call_sites() -> list[tuple[str, int, str, object, str | None]]:
    """(module, line, user, command, cwd) for every exec/open_stdio call with a non-agent user."""
    sites = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("exec", "open_stdio")
                ):
                    continue
                keywords = {k.arg: k.value for k in node.keywords}
                user = keywords.get("user")
                if user is None or (isinstance(user, ast.Constant) and user.value == "agent"):
                    continue
                module = _module_name(path)
                user_value = _constant(module, user)
                cwd = _constant(module, keywords["cwd"]) if "cwd" in keywords else None
                for cmd in _commands(module, tree, node):
                    sites.append((module, node.lineno, user_value, cmd, cwd))
    return sites


def test_every_privileged_exec_follows_the_rules():
    sites = privileged_call_sites()
    # The grader's readers, the SQL session, the state diff and the episode's end at least.
    assert {(m, u) for m, _, u, _, _ in sites} >= {
        ("grader.probe", "grader"),
        ("grader.sql_session", "grader"),
        ("grader.changes", "root"),
        ("gym.sandbox.docker_sandbox", "root"),
    }
    for module, line, user, cmd, cwd in sites:
        where = f"{module}:{line} (as {user})"
        assert user != "agent", where
        assert isinstance(cmd, list), f"{where}: a privileged command is an argv list, not a shell string"
        assert cmd and cmd[0] != ARGUMENT, f"{where}: the program must be a constant"
        assert cwd != ARGUMENT, f"{where}: the working directory must be a constant"
        privileged_command(cmd, cwd, str(user))  # raises SandboxError when it breaks a rule


@pytest.mark.parametrize(
    "cmd, cwd, problem",
    [
        (["python3", "-m", "mcp_wrappers.chat.snapshot"], None, "absolute path"),
        (["/opt/egym/venv/bin/python3", "-m", "mcp_wrappers.chat.snapshot"], None, "without -I"),
        (["/usr/bin/python3", "/tmp/x.py"], None, "without -I"),
        (["/usr/bin/python3", "-m", "x", "-I"], None, "without -I"),  # -I after -m belongs to the module
        (["/bin/cat", "/etc/hostname"], "/workspace", "the agent can write there"),
        (["/bin/cat", "/etc/hostname"], "/tmp/sub/dir", "the agent can write there"),
        (["/bin/cat", "/etc/hostname"], "/home/agent/../agent", "the agent can write there"),
        ([], None, "absolute path"),
    ],
)
def test_unsafe_privileged_commands_are_refused(cmd, cwd, problem):
    with pytest.raises(SandboxError, match=problem):
        privileged_command(cmd, cwd, "root")


@pytest.mark.parametrize(
    "cmd",
    [
        ["/opt/egym/venv/bin/python3", "-I", "-m", "mcp_wrappers.chat.snapshot"],
        ["/usr/bin/python3", "-IB", "-c", "print(1)"],
        ["/bin/bash", "-c", "exec /usr/bin/id"],
        "echo a shell string runs as /bin/bash -c",
    ],
)
def test_safe_privileged_commands_run_from_root_directory(cmd):
    argv, cwd = privileged_command(cmd, None, "root")
    assert argv[0].startswith("/") and cwd == "/"


def test_agent_writable_folders():
    assert all(agent_writable(p) for p in AGENT_WRITABLE)
    assert not any(
        agent_writable(p) for p in ("/", "/opt/egym", "/var/lib/egym-grader", "/workspacefoo", "/tmpx")
    )
