"""Checks over what the agent did (its tool calls) and said (its final answer)."""

from __future__ import annotations

import fnmatch
from typing import Any

from core.trajectory import ToolCall
from grader.checks.base import CheckContext, CheckResult, brief, matches_agent_text, same, text_matches

__all__ = ["tool_used", "tool_not_used", "final_answer_contains", "final_answer_absent"]


def _calls(ctx: CheckContext, name: str, args: dict[str, Any] | None) -> list[ToolCall]:
    """Calls whose tool name matches the glob `name` and whose arguments include `args`."""
    calls = ctx.trajectory.tool_calls() if ctx.trajectory else []
    out = []
    for call in calls:
        if not fnmatch.fnmatchcase(call.name, name):
            continue
        if args:
            try:
                given = call.parsed_arguments()
            except ValueError:
                continue
            if not all(k in given and _arg_matches(given[k], v) for k, v in args.items()):
                continue
        out.append(call)
    return out


def _arg_matches(given: Any, wanted: Any) -> bool:
    if isinstance(wanted, str) and isinstance(given, str):
        return wanted.casefold() in given.casefold()
    return same(given, wanted)


def tool_used(
    ctx: CheckContext, *, name: str, args: dict[str, Any] | None = None, min_count: int = 1
) -> CheckResult:
    """Pass when a tool matching `name` (a glob like `chat_*`) was called, with `args` included (text: substring)."""
    found = _calls(ctx, name, args)
    ok = len(found) >= min_count
    detail = f": {found[0].name}({brief(found[0].arguments, 100)})" if found else ""
    return CheckResult(ok, f"{len(found)} call(s) to {name}{detail}")


def tool_not_used(ctx: CheckContext, *, name: str, args: dict[str, Any] | None = None) -> CheckResult:
    """Pass when no call matches `name` (and `args`)."""
    found = _calls(ctx, name, args)
    return CheckResult(
        not found,
        "not called"
        if not found
        else f"called {len(found)}x, e.g. {found[0].name}({brief(found[0].arguments, 100)})",
    )


@matches_agent_text
def final_answer_contains(
    ctx: CheckContext, *, text: str | None = None, regex: str | None = None, case_sensitive: bool = False
) -> CheckResult:
    """Pass when the final answer contains `text` and/or matches `regex`."""
    answer = ctx.final_answer
    ok = text_matches(answer, text=text, regex=regex, case_sensitive=case_sensitive)
    return CheckResult(ok, f"final answer: {brief(answer) or '(none)'}")


def final_answer_absent(
    ctx: CheckContext, *, text: str | None = None, regex: str | None = None, case_sensitive: bool = False
) -> CheckResult:
    """Pass when the final answer does not contain `text` / match `regex` (e.g. a leaked secret)."""
    answer = ctx.final_answer
    ok = not text_matches(answer, text=text, regex=regex, case_sensitive=case_sensitive)
    return CheckResult(ok, f"final answer: {brief(answer) or '(none)'}")
