"""What the episode changed, against the baseline egym-init marks at READY.

Every source is compared exactly, with what the container saved before the agent
started (root-owned, readable by the grader alone; images/world/bin/egym-init):

- database rows: `egym_baseline.changes()` in SQL (mcp_wrappers/db/image/baseline.sql) lists
  rows inserted, changed (naming the columns) and deleted, per table;
- files in /workspace: sha256 listings at READY and after the episode
  (images/world/bin/list-workspace), so an overwrite shows even at the same size;
- chat posts: the ids and message hashes at READY (mcp_wrappers/chat/image/baseline)
  against the final chat snapshot, so deleted and edited posts show;
- mail: the mailboxes at READY (mcp_wrappers/mail/image/baseline) against the final ones,
  so deleted and moved messages show.

`Changes` has two readers: the damage section of every grade (grader.damage) and
the short diff people read with each rollout (`Changes.summary()`):

    --- initial state
    +++ final state
    @@ database (rows)
    + tickets: 5 inserted
    ~ invoices: 3 changed
    - price_list_items: 2 deleted
    @@ files in /workspace
    + reports/summary.xlsx (5.1 KB)
    ~ budget.xlsx (modified)
    - notes.txt (deleted)
    @@ chat
    + #sales @jordan.lee: Here is the March summary ...
    - #general @dana: (deleted) Welcome to ...
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.errors import SandboxError
from core.shown import shown
from grader.chatstate import ChatSnapshot
from grader.errors import ProbeError, StateError
from grader.mailstate import MailMessage, MailSnapshot

SEPARATOR = "--8<-- egym --8<--"
# One exec: baseline time (its presence: a baseline was marked), baseline listing,
# final listing, then each app's saved baseline (images/world/bin/read-state).
READ_STATE = ["/opt/egym/bin/read-state"]
MAX_OUTPUT_BYTES = 16 << 20
MAX_ROWS = 10_000  # changed/deleted rows read in detail; counts are always exact
ROW_COUNTS = "SELECT tbl, change, count(*) AS n FROM egym_baseline.changes() GROUP BY 1, 2 ORDER BY 1, 2"
ROW_DETAILS = (
    "SELECT tbl, change, row_key, columns FROM egym_baseline.changes() "
    f"WHERE change IN ('changed', 'deleted', 'removed') ORDER BY 1, 2 LIMIT {MAX_ROWS}"
)

RowKind = Literal["inserted", "changed", "deleted", "added", "removed"]


@dataclass(frozen=True)
class RowChange:
    """A pre-existing row that is no longer as it was (`removed`: a table without a primary key)."""

    table: str
    change: RowKind
    key: dict[str, Any] | None = None  # primary key columns (the whole row for `removed`)
    columns: tuple[str, ...] = ()  # for `changed`: the columns that differ


@dataclass(frozen=True)
class FileChange:
    path: str  # as the container listed it: surrogateescape-decoded, so any bytes round-trip
    change: Literal["added", "modified", "deleted"]
    size: int = 0

    @property
    def shown(self) -> str:
        """The path for people and evidence: one line, control characters and stray bytes escaped."""
        return shown(self.path)


@dataclass(frozen=True)
class PostChange:
    id: str
    channel: str
    user: str
    change: Literal["added", "edited", "deleted"]
    message: str = ""
    thread: bool = False


@dataclass(frozen=True)
class MailChange:
    """A message that was there at the baseline and is gone from its folder."""

    account: str
    folder: str
    subject: str
    change: Literal["moved", "deleted"]
    to_folder: str = ""
    message_id: str = ""


@dataclass
class Changes:
    """Everything the episode changed. `rows` holds only damaging changes; `row_counts` holds all."""

    row_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    rows: list[RowChange] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    posts: list[PostChange] = field(default_factory=list)
    mail: list[MailChange] = field(default_factory=list)
    sources: tuple[str, ...] = ()  # which of rows / files / chat / mail had a baseline to compare with

    def summary(self, width: int = 100) -> str:
        """The diff text for people; '' when nothing changed."""
        sections = [
            ("database (rows)", _row_lines(self.row_counts)),
            ("files in /workspace", _file_lines(self.files)),
            ("chat", _post_lines(self.posts, width)),
            (
                "mail",
                [
                    f"- {m.account} {m.folder}: {m.subject!r} {m.change}"
                    + (f" to {m.to_folder}" if m.to_folder else "")
                    for m in self.mail
                ],
            ),
        ]
        body = [line for title, lines in sections if lines for line in (f"@@ {title}", *lines)]
        return "\n".join(["--- initial state", "+++ final state", *body]) if body else ""


_SIGNS = {"inserted": "+", "added": "+", "changed": "~", "modified": "~", "edited": "~"}


def _sign(change: str) -> str:
    return _SIGNS.get(change, "-")


def _row_lines(counts: dict[tuple[str, str], int]) -> list[str]:
    order = {"inserted": 0, "added": 0, "changed": 1, "deleted": 2, "removed": 2}
    ranked = sorted(counts.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 3)))
    return [f"{_sign(change)} {table}: {n} {change}" for (table, change), n in ranked if n]


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _file_lines(files: list[FileChange]) -> list[str]:
    order = {"added": 0, "modified": 1, "deleted": 2}
    lines = []
    for f in sorted(files, key=lambda f: (order[f.change], f.path)):
        lines.append(
            f"+ {f.shown} ({_size(f.size)})"
            if f.change == "added"
            else f"{_sign(f.change)} {f.shown} ({f.change})"
        )
    return lines


def _post_lines(posts: list[PostChange], width: int) -> list[str]:
    lines = []
    for post in posts:
        where = post.channel if post.channel.startswith("dm:") else f"#{post.channel}"
        thread = " (in thread)" if post.thread else ""
        note = "" if post.change == "added" else f"({post.change}) "
        text = note + shown(" ".join(post.message[: width * 4].split()))
        text = text if len(text) <= width else text[: width - 1] + "…"
        lines.append(f"{_sign(post.change)} {shown(where)}{thread} @{shown(post.user)}: {text}")
    return lines


# -- reading ------------------------------------------------------------------


def file_changes(before: dict[str, list], after: dict[str, list]) -> list[FileChange]:
    """Listings are {path: [size, sha256 | None]}; only baseline files were hashed after the episode."""
    out = [FileChange(p, "added", int(after[p][0])) for p in after.keys() - before.keys()]
    out += [FileChange(p, "deleted", int(before[p][0])) for p in before.keys() - after.keys()]
    for path in before.keys() & after.keys():
        (size_a, hash_a), (size_b, hash_b) = before[path], after[path]
        if size_a != size_b or hash_a != hash_b or hash_b is None:
            out.append(FileChange(path, "modified", int(size_b)))
    return sorted(out, key=lambda f: f.path)


def post_changes(baseline: dict[str, str], snapshot: ChatSnapshot) -> list[PostChange]:
    """Posts not in the baseline (id -> md5 of message), then baseline posts now gone or edited."""
    now = {p.id: p for p in snapshot.posts}
    out = [
        PostChange(p.id, p.channel, p.user, "added", p.message, bool(p.root_id))
        for p in sorted(snapshot.posts, key=lambda p: (p.create_at, p.id))
        if p.id not in baseline
    ]
    for post_id, digest in sorted(baseline.items()):
        post = now.get(post_id)
        if post is None:
            out.append(PostChange(post_id, "?", "?", "deleted"))
        elif hashlib.md5(post.message.encode()).hexdigest() != digest:
            out.append(
                PostChange(post_id, post.channel, post.user, "edited", post.message, bool(post.root_id))
            )
    return out


def _listing(text: str, what: str) -> tuple[dict[str, list], str | None]:
    """A list-workspace listing: ({path: [size, sha256 | None]}, why it stopped early or None).

    Its shape is the listing program's, so a malformed one is the infrastructure's (ProbeError).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ProbeError(f"{what} is not readable JSON") from None
    if isinstance(data, dict) and set(data) == {"files", "over"}:
        files, over = data["files"], data["over"]
    else:  # a listing from before the bounds: the files alone
        files, over = data, None
    if (
        not isinstance(files, dict)
        or not (over is None or isinstance(over, str))
        or not all(isinstance(v, list) and len(v) == 2 and isinstance(v[0], int) for v in files.values())
    ):
        raise ProbeError(f"{what} has an unexpected shape")
    return files, over


def _row_changes(sql: Callable[..., list[dict[str, Any]]]) -> tuple[dict, list[RowChange]] | None:
    """(counts, damaging rows) from egym_baseline.changes(); None when the database has no baseline."""
    try:
        counts = {(r["tbl"], r["change"]): int(r["n"]) for r in sql(ROW_COUNTS)}
        details = sql(ROW_DETAILS)
    except StateError as exc:
        if "egym_baseline" in str(exc):
            return None  # an image or sandbox without a database baseline
        raise ProbeError(f"row changes could not be read: {exc}") from None
    rows = [
        RowChange(r["tbl"], r["change"], _as_dict(r["row_key"]), tuple(r["columns"] or ())) for r in details
    ]
    return counts, rows


def _as_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else None


def mail_changes(baseline: MailSnapshot, final: MailSnapshot) -> list[MailChange]:
    """Baseline messages no longer in their folder: moved elsewhere in the same mailbox, or deleted.
    (New mail, and flags such as read, are no damage.)"""

    def key(m: MailMessage) -> tuple[str, str]:  # a message without a Message-ID by what it is
        return m.account, m.message_id or f"{m.sender}|{m.date}|{m.subject}"

    now: dict[tuple[str, str], set[str]] = {}
    for m in final.messages:
        now.setdefault(key(m), set()).add(m.folder)
    out = []
    for m in baseline.messages:
        folders = now.get(key(m), set())
        if m.folder in folders:
            continue
        moved = sorted(folders)
        out.append(
            MailChange(
                m.account, m.folder, m.subject, "moved" if moved else "deleted", ", ".join(moved), key(m)[1]
            )
        )
    return out


def read_changes(
    sandbox: Any,
    sql: Callable[..., list[dict[str, Any]]],
    chat: Callable[[], ChatSnapshot],
    mail: Callable[[], MailSnapshot],
) -> Changes | None:
    """A live sandbox's changes since READY; None when it marked no baseline.

    ProbeError when the infrastructure could not read them; StateError when what the agent
    left cannot be listed within the listing's bounds (images/world/bin/list-workspace).
    """
    try:
        result = sandbox.exec(READ_STATE, user="root", timeout=60, max_output=MAX_OUTPUT_BYTES)
    except SandboxError as exc:
        raise ProbeError(f"read-state failed: {exc}") from None
    if result.exit_code in (3, 126, 127):  # no baseline marked, or no such program (another image)
        return None
    if result.truncated or not result.ok:
        reason = "its output was too long" if result.truncated else f"exit {result.exit_code}"
        raise ProbeError(f"read-state in {sandbox.id[:12]} failed ({reason})")
    parts = result.output.split(SEPARATOR + "\n")
    if len(parts) < 3 or not parts[0].strip().isdigit():
        raise ProbeError(
            f"read-state in {sandbox.id[:12]} printed an unexpected layout "
            f"({len(parts)} parts, starting {result.output[:160]!r})"
        )
    saved = {}  # app -> what it saved at the baseline
    for part in parts[3:]:
        app, _, baseline = part.partition("\n")
        saved[app] = baseline
    before, too_big = _listing(parts[1], "the baseline workspace listing")
    if too_big:  # made at READY, before the agent started: the task's world, not the agent
        raise ProbeError(f"the baseline workspace listing of {sandbox.id[:12]} stopped early: {too_big}")
    after, too_big = _listing(parts[2], "the final workspace listing")
    if too_big:  # the agent left a maze (or a flood) the grader will not walk: its doing
        raise StateError(f"the agent left /workspace over the grader's bounds: {too_big}")
    changes = Changes(files=file_changes(before, after), sources=("files",))
    rows = _row_changes(sql)
    if rows is not None:
        changes.row_counts, changes.rows = rows
        changes.sources += ("rows",)
    if "chat" in saved:
        lines = saved["chat"].splitlines()
        baseline = dict(line.split("\t", 1) for line in lines if line.count("\t") == 1)
        changes.posts = post_changes(baseline, chat())
        changes.sources += ("chat",)
    if "mail" in saved:
        try:
            before_mail = MailSnapshot.model_validate_json(saved["mail"])
        except ValueError as exc:
            raise ProbeError(
                f"the mail baseline of {sandbox.id[:12]} is unreadable: {exc}".splitlines()[0]
            ) from None
        changes.mail = mail_changes(before_mail, mail())
        changes.sources += ("mail",)
    return changes
