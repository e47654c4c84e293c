"""The built-in tools every episode has: bash, read, write, edit, glob, grep, todo.

All of them act inside the sandbox as the agent user: bash through the
persistent shell, the file tools through a long-lived `fileops_remote`
process (so file permissions apply exactly as for the agent's own commands). `todo`
lives in the harness: it is the model's own notepad.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from core.strict import StrictModel
from gym.harness.fileops import FileOps
from gym.harness.shell import PersistentShell
from gym.harness.tool import ToolError, ToolSpec, tool
from gym.sandbox.base import Sandbox


class TodoItem(StrictModel):
    content: str = Field(description="What to do, in a few words.")
    status: Literal["pending", "in_progress", "completed"] = "pending"


@dataclass
class ToolEnv:
    """What the built-in tools act on: one per episode."""

    sandbox: Sandbox
    shell: PersistentShell
    files: FileOps
    tool_timeout_s: float = 60
    todos: list[TodoItem] = field(default_factory=list)


async def _remote(env: ToolEnv, op: str, **args: object) -> str:
    """Run one fileops_remote operation in the sandbox; its failures become ToolError."""
    return await env.files.call(op, args, cwd=env.shell.cwd, timeout=env.tool_timeout_s)


@tool
async def bash(env: ToolEnv, command: str, timeout: float | None = None) -> str:
    """Run a command in a persistent bash shell on your workstation (as user `agent`).

    The shell keeps its state between calls: `cd`, exported variables and shell
    functions carry over. stdin is empty, so do not run interactive programs.
    Long output is cut in the middle. A command that runs past its timeout is
    killed and the shell stays usable.

    Args:
        command: The command line or script to run.
        timeout: Seconds before the command is killed (default and maximum: the episode's tool timeout).
    """
    limit = min(timeout, env.tool_timeout_s) if timeout and timeout > 0 else env.tool_timeout_s
    result = await env.shell.run(command, limit)
    notes = []
    if result.timed_out:
        notes.append(f"[command timed out after {limit:g}s and was killed]")
    if result.restarted:
        notes.append(
            f"[the shell exited or hung and was restarted in {result.cwd}: "
            "variables and functions from earlier commands are gone]"
        )
    if result.exit_code not in (0, None):
        notes.append(f"[exit code {result.exit_code}]")
    text = "\n".join([result.output.rstrip("\n") or "(no output)", *notes])
    if result.timed_out:
        raise ToolError(text)
    return text


@tool
async def read(env: ToolEnv, path: str, offset: int = 1, limit: int = 2000) -> str:
    """Read a text file, with line numbers.

    Args:
        path: File path, absolute or relative to the shell's current directory.
        offset: First line to show (1-based).
        limit: How many lines to show at most.
    """
    return await _remote(env, "read", path=path, offset=offset, limit=max(limit, 1))


@tool
async def write(env: ToolEnv, path: str, content: str) -> str:
    """Create or overwrite a text file (parent folders are created).

    Args:
        path: File path, absolute or relative to the shell's current directory.
        content: The complete new content of the file.
    """
    return await _remote(env, "write", path=path, content=content)


@tool
async def edit(env: ToolEnv, path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
    """Replace an exact piece of text in a file.

    `old_string` must match the file exactly (whitespace included) and only once,
    unless `replace_all` is true. Read the file first to copy the text exactly.

    Args:
        path: File path, absolute or relative to the shell's current directory.
        old_string: The exact text to replace.
        new_string: The text to put in its place.
        replace_all: Replace every occurrence instead of requiring a unique match.
    """
    return await _remote(
        env, "edit", path=path, old_string=old_string, new_string=new_string, replace_all=replace_all
    )


@tool
async def glob(env: ToolEnv, pattern: str, path: str = ".") -> str:
    """Find files by name pattern (`**` matches any folders), newest first.

    Args:
        pattern: A glob pattern such as `**/*.csv` or `reports/*.docx`.
        path: Folder to search from (default: the shell's current directory).
    """
    return await _remote(env, "glob", pattern=pattern, path=path)


@tool
async def grep(
    env: ToolEnv, pattern: str, path: str = ".", include: str | None = None, ignore_case: bool = False
) -> str:
    """Search file contents with a regular expression (Python syntax); prints file:line:text.

    Args:
        pattern: The regular expression to look for.
        path: File or folder to search (default: the shell's current directory).
        include: Only search files whose name matches this glob, e.g. `*.md`.
        ignore_case: Match regardless of letter case.
    """
    return await _remote(env, "grep", pattern=pattern, path=path, include=include, ignore_case=ignore_case)


@tool
async def todo(env: ToolEnv, items: list[TodoItem]) -> str:
    """Keep your task list: send the whole list each time (it replaces the previous one).

    Use it to plan multi-step work and to mark progress.

    Args:
        items: Every item, in order, with its status.
    """
    env.todos = list(items)
    marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
    lines = [f"{marks[item.status]} {item.content}" for item in env.todos]
    done = sum(item.status == "completed" for item in env.todos)
    return (
        "\n".join([f"Task list ({done}/{len(env.todos)} done):", *lines]) if lines else "Task list cleared."
    )


BUILTIN_TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in (bash, read, write, edit, glob, grep, todo)}
