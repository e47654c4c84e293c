"""What the episode changed: a short final-state diff for people reading a rollout.

egym-init marks a baseline just before the sandbox is ready (grades never depend
on it): PostgreSQL's per-table counters are reset, the /workspace listing and the
time are saved under /egym/baseline. Here we compare against that:

    --- initial state
    +++ final state
    @@ database (rows)
    + tickets: 5 inserted
    ~ invoices: 3 updated
    - price_list_items: 2 deleted
    @@ files in /workspace
    + reports/summary.xlsx (5.1 KB)
    ~ budget.xlsx (modified)
    - notes.txt (deleted)
    @@ chat
    + #sales @jordan.lee: Here is the March summary ...

The dashboard colours `+`/`-` lines. It is a summary, not a row-level diff.
"""

from __future__ import annotations

from typing import Any

from grader.chatstate import ChatSnapshot

SEPARATOR = "--8<-- egym --8<--"
# One exec (this runs after every grade): baseline time, baseline listing, final listing, table counters.
READ_STATE = ["/opt/egym/bin/read-state"]
MAX_OUTPUT_BYTES = 16 << 20


def database_lines(rows: list[tuple[str, int, int, int]]) -> list[str]:
    """One line per changed table and kind of change, inserts first."""
    lines = []
    for table, inserted, updated, deleted in rows:
        for sign, count, verb in (
            ("+", inserted, "inserted"),
            ("~", updated, "updated"),
            ("-", deleted, "deleted"),
        ):
            if count:
                lines.append(f"{sign} {table}: {count} {verb}")
    return lines


def _listing(text: str) -> dict[str, tuple[int, str]]:
    files = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].isdigit():  # the agent names the files: skip what does not parse
            files[parts[0]] = (int(parts[1]), parts[2])
    return files


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def file_lines(before_text: str, after_text: str) -> list[str]:
    before, after = _listing(before_text), _listing(after_text)
    lines = [f"+ {p} ({_size(after[p][0])})" for p in sorted(after.keys() - before.keys())]
    lines += [f"~ {p} (modified)" for p in sorted(after.keys() & before.keys()) if after[p] != before[p]]
    lines += [f"- {p} (deleted)" for p in sorted(before.keys() - after.keys())]
    return lines


def chat_lines(snapshot: ChatSnapshot, since_ms: int, width: int = 100) -> list[str]:
    """Posts written after the baseline, oldest first."""
    lines = []
    for post in sorted((p for p in snapshot.posts if p.create_at >= since_ms), key=lambda p: p.create_at):
        where = post.channel if post.channel.startswith("dm:") else f"#{post.channel}"
        thread = " (in thread)" if post.root_id else ""
        text = " ".join(post.message.split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        lines.append(f"+ {where}{thread} @{post.user}: {text}")
    return lines


def state_diff(sandbox: Any, chat: ChatSnapshot | None = None) -> str:
    """The diff text for a live sandbox; '' when nothing changed or no baseline was marked."""
    result = sandbox.exec(READ_STATE, user="root", timeout=30, max_output=MAX_OUTPUT_BYTES)
    if result.truncated:
        return f"(final-state diff unavailable: over {MAX_OUTPUT_BYTES >> 20} MB of listings)"
    parts = result.output.split(SEPARATOR + "\n")
    if result.exit_code == 3 or len(parts) != 4:
        return ""
    ready_ms, before, after, tables = parts
    rows = [
        (t, int(i), int(u), int(d))
        for t, i, u, d in (line.split("\t") for line in tables.splitlines() if line.count("\t") == 3)
        if f"{i}{u}{d}".isdigit()
    ]
    sections = [
        ("database (rows)", database_lines(rows)),
        ("files in /workspace", file_lines(before, after)),
        ("chat", chat_lines(chat, int(ready_ms)) if chat is not None else []),
    ]
    body = [line for title, lines in sections if lines for line in (f"@@ {title}", *lines)]
    return "\n".join(["--- initial state", "+++ final state", *body]) if body else ""
