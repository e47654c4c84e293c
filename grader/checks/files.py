"""Plain file checks. Relative paths are under /workspace."""

from __future__ import annotations

from grader.checks.base import CheckContext, CheckResult, brief, matches_agent_text, text_matches

__all__ = ["file_exists", "file_absent", "file_contains"]


def file_exists(ctx: CheckContext, *, path: str, min_bytes: int = 1) -> CheckResult:
    """Pass when the file exists and holds at least `min_bytes` bytes."""
    data = ctx.probe.file(path)
    if data is None:
        return CheckResult(False, f"{path}: not found")
    return CheckResult(len(data) >= min_bytes, f"{path}: {len(data)} bytes")


def file_absent(ctx: CheckContext, *, path: str) -> CheckResult:
    """Pass when the file does not exist (e.g. a scratch file was cleaned up)."""
    data = ctx.probe.file(path)
    return CheckResult(
        data is None, f"{path}: " + ("not found" if data is None else f"exists ({len(data)} bytes)")
    )


@matches_agent_text
def file_contains(
    ctx: CheckContext,
    *,
    path: str,
    text: str | None = None,
    regex: str | None = None,
    case_sensitive: bool = False,
) -> CheckResult:
    """Pass when the (UTF-8) text file contains `text` and/or matches `regex`."""
    data = ctx.probe.file(path)
    if data is None:
        return CheckResult(False, f"{path}: not found")
    content = data.decode("utf-8", errors="replace")
    ok = text_matches(content, text=text, regex=regex, case_sensitive=case_sensitive)
    return CheckResult(ok, f"{path}: {brief(content, 120)}")
