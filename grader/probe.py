"""Probe: how checks read a rollout's final state. A few methods, nothing Docker-specific.

Two kinds of failure, kept apart on purpose:
- ProbeError: the state could not be read (container gone, chat service down,
  exec timed out, a reader printing garbage). Infrastructure noise: the item
  becomes `error`.
- StateError: the state was read and cannot answer (a query fails because the
  agent dropped a table, a document is corrupt or too large to read, a file is
  over the size limit or unreadable, a maze in /workspace). That is the agent's
  doing: the item `fail`s with the message as evidence. An agent must not be able
  to turn a failing check into an excused `error` by breaking things.

Files are never read by following the agent's symlinks: mcp_wrappers.safe_copy
copies them, as `grader`, into the grader's own folder (each part of the path
opened with O_NOFOLLOW), and the host reads the copy.
"""

from __future__ import annotations

import json
import posixpath
import secrets
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from core.content_cache import ContentCache
from core.errors import SandboxError
from grader import document_reads
from grader.changes import Changes, read_changes
from grader.chatstate import ChatSnapshot
from grader.docstate import document_dict
from grader.document_reads import reading_key, repeatable
from grader.errors import ProbeError, StateError
from grader.mailstate import MailSnapshot
from grader.sql_session import SqlSession
from mcp_wrappers import PYTHON

WORKSPACE = "/workspace"
# The in-container readers run as `grader` (no capabilities, a read-only database
# role), isolated from anything the agent can write; see docs/security.md.
READER = "grader"
SNAPSHOT = [*PYTHON, "-m", "mcp_wrappers.chat.snapshot"]
MAIL_SNAPSHOT = [*PYTHON, "-m", "mcp_wrappers.mail.snapshot"]
READ_DOCUMENT = [*PYTHON, "-m", "mcp_wrappers.office.read_document"]
SAFE_COPY = [*PYTHON, "-m", "mcp_wrappers.safe_copy"]
DOCUMENT_COPIES = "/var/lib/egym-grader/documents"  # the reader opens copies here, never the agent's files
FILE_COPIES = "/var/lib/egym-grader/files"  # file() reads these copies through the Docker API
MAX_OUTPUT_BYTES = 64 << 20  # a reader's whole answer
MAX_FILE_BYTES = 64 << 20
MAX_KEPT_BYTES = 4 << 20  # larger documents are read each time (grader.document_reads)
COPY_TIMEOUT_S = 60
# The document reader stops itself this long before its exec's timeout (it kills its own LibreOffice).
READER_MARGIN_S = 20
_COPY_ANSWERS = ("copied", "absent", "refused")
T = TypeVar("T", bound=BaseModel)

__all__ = ["Probe", "ProbeError", "SandboxProbe", "StateError", "StaticProbe", "workspace_path"]


class Probe(Protocol):
    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows as dicts, run read-only as the database superuser. StateError when PostgreSQL rejects it."""
        ...

    def chat(self) -> ChatSnapshot:
        """The whole chat workspace (users, channels, posts)."""
        ...

    def mail(self) -> MailSnapshot:
        """Every mailbox and the journal of submitted mail."""
        ...

    def file(self, path: str) -> bytes | None:
        """A regular file's bytes, None when absent (or a symlink, a folder). Relative paths are under
        /workspace. StateError when the agent made it unreadable (too large, its mode)."""
        ...

    def document(self, path: str) -> dict[str, Any]:
        """A spreadsheet or text document as read by LibreOffice; `{"error": ...}` when unreadable or absent."""
        ...

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        """Hint: these documents and (query, params) will be read; a probe may load them in one go."""
        ...

    def changes(self) -> Changes | None:
        """What the episode changed since the baseline (grader.changes); None when there is no baseline."""
        ...


def _sql_key(query: str, params: Any) -> str:
    return json.dumps([query, params], sort_keys=True, default=str)


def workspace_path(path: str) -> str:
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(WORKSPACE, path))


class SandboxProbe:
    """Reads a live sandbox's final state, caching each source once per probe (one probe per grade).

    SQL goes through one persistent read-only session (no exec per query), the
    chat snapshot is taken once, and documents are read in one LibreOffice run (none for bytes
    read before: grader.document_reads).
    """

    def __init__(self, sandbox, *, timeout_s: float = 120, reads: ContentCache | None = None):
        """`reads`: documents read before (default: grader.document_reads.READS)."""
        self.sandbox = sandbox
        self.timeout_s = timeout_s
        self.reads = reads if reads is not None else document_reads.READS
        self._sql: SqlSession | None = None
        self._rows: dict[str, list[dict[str, Any]] | Exception] = {}
        self._chat: ChatSnapshot | None = None
        self._mail: MailSnapshot | None = None
        self._files: dict[str, bytes | None | StateError] = {}
        self._documents: dict[str, dict[str, Any] | ProbeError] = {}
        self._copies = 0
        self._copy_tag = secrets.token_hex(4)  # copies of two probes on one sandbox never share a name
        self._changes: Changes | None | ProbeError | StateError = ProbeError("not read yet")
        self._changes_read = False

    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        # Many items share a query (one per expected value): ask PostgreSQL once.
        key = _sql_key(query, params)
        if key not in self._rows:
            self._fetch([(query, params)])
        rows = self._rows[key]
        if isinstance(rows, Exception):
            raise type(rows)(*rows.args)  # a fresh exception each time: no traceback piling up
        return [dict(row) for row in rows]

    def _fetch(self, requests: list[tuple[str, Any]]) -> None:
        if self._sql is None:
            try:
                self._sql = SqlSession(self.sandbox)
            except SandboxError as exc:
                raise ProbeError(f"SQL session in {self.sandbox.id[:12]} could not start: {exc}") from None
        try:
            answers = self._sql.query_many(requests)
        except OSError as exc:  # the session's stream broke under it
            raise ProbeError(f"SQL session in {self.sandbox.id[:12]} broke: {exc}") from None
        for (query, params), answer in zip(requests, answers, strict=True):
            self._rows[_sql_key(query, params)] = answer

    def chat(self) -> ChatSnapshot:
        if self._chat is None:
            self._chat = self._snapshot(SNAPSHOT, ChatSnapshot, "chat snapshot")
        return self._chat

    def mail(self) -> MailSnapshot:
        if self._mail is None:
            self._mail = self._snapshot(MAIL_SNAPSHOT, MailSnapshot, "mail snapshot")
        return self._mail

    def _snapshot(self, cmd: list[str], model: type[T], what: str) -> T:
        """An app's snapshot CLI's JSON as `model`; ProbeError when it fails or has another shape."""
        data = self._run_json(cmd, what)
        try:
            return model.model_validate(data)
        except ValueError as exc:
            raise ProbeError(
                f"{what} in {self.sandbox.id[:12]} has an unexpected shape: {exc}".splitlines()[0]
            ) from None

    def file(self, path: str) -> bytes | None:
        """A regular file's bytes; None when absent or not a regular file (a symlink, a folder).

        StateError when the agent made it unreadable (over the size limit, its mode).
        """
        path = workspace_path(path)
        if path not in self._files:
            try:
                self._files[path] = self._read(path)
            except StateError as exc:
                self._files[path] = exc
        found = self._files[path]
        if isinstance(found, StateError):
            raise StateError(str(found))
        return found

    def _read(self, path: str) -> bytes | None:
        """Copy the file into the grader's folder without following symlinks, then read the copy."""
        self._copies += 1
        copy = f"{FILE_COPIES}/{self._copy_tag}-{self._copies}"
        answer = self._copy({path: copy})[path]
        if "absent" in answer:
            return None
        if "refused" in answer:
            raise StateError(answer["refused"])
        try:
            return self.sandbox.read_file(copy, max_bytes=MAX_FILE_BYTES)
        except Exception as exc:  # noqa: BLE001 - the grader's own copy: any trouble reading it is ours
            raise ProbeError(f"{path}: the grader's copy could not be read: {exc}") from None

    def _copy(self, pairs: dict[str, str]) -> dict[str, dict[str, Any]]:
        """mcp_wrappers.safe_copy's answer for each source path (src -> destination in the grader's folder)."""
        sources_and_copies = [part for pair in pairs.items() for part in pair]
        data = self._run_json(
            [*SAFE_COPY, str(MAX_FILE_BYTES), *sources_and_copies], "safe_copy", timeout=COPY_TIMEOUT_S
        )
        if not isinstance(data, dict) or not all(
            isinstance(data.get(src), dict)
            and len(data[src]) == 1
            and next(iter(data[src])) in _COPY_ANSWERS
            and isinstance(next(iter(data[src].values())), int | str)
            for src in pairs
        ):
            raise ProbeError(f"safe_copy in {self.sandbox.id[:12]} printed an unexpected answer")
        return data

    def document(self, path: str) -> dict[str, Any]:
        path = workspace_path(path)
        if path not in self._documents:
            self.prefetch([path])
        doc = self._documents[path]
        if isinstance(doc, ProbeError):
            raise ProbeError(str(doc))
        return doc

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        unique = {_sql_key(q, p): (q, p) for q, p in queries}
        wanted = [request for key, request in unique.items() if key not in self._rows]
        if wanted:
            self._fetch(wanted)  # pipelined: one round trip for all of them
        missing = sorted({workspace_path(p) for p in documents} - set(self._documents))
        if missing:
            self._read_documents(missing)

    def _read_documents(self, paths: list[str]) -> None:
        """Copy each file into the grader's own folder, then read all copies in one LibreOffice run.

        Copies whose bytes were read before (grader.document_reads) are not read again.

        A failed run is remembered for its paths: items reading the same document do not start
        the reader again (each try may take the reader's whole time).
        """
        pairs = {}
        for path in paths:
            self._copies += 1
            pairs[path] = f"{DOCUMENT_COPIES}/{self._copy_tag}-{self._copies}/{posixpath.basename(path)}"
        try:
            answers = self._copy(pairs)
        except ProbeError as exc:
            self._documents.update(dict.fromkeys(paths, exc))
            return
        copies: dict[str, str] = {}
        for path, copy in pairs.items():
            answer = answers[path]
            if "absent" in answer:
                self._documents[path] = {"error": f"no such file: {path}"}
            elif "refused" in answer:  # the checks raise StateError on a document error: the agent's
                self._documents[path] = {"error": answer["refused"]}
            else:
                copies[copy] = path
        keys = self._reading_keys([copy for copy, path in copies.items() if _small(answers[path])])
        for copy, key in keys.items():
            known = self.reads.get(key)
            if known is not None:
                self._documents[copies.pop(copy)] = known
        if not copies:
            return
        budget = max(self.timeout_s - READER_MARGIN_S, self.timeout_s / 2)
        try:
            data = self._run_json(
                [*READ_DOCUMENT, *copies], "read_document", env={"EGYM_READER_BUDGET_S": f"{budget:g}"}
            )
            if not isinstance(data, dict):
                raise ProbeError(
                    f"read_document in {self.sandbox.id[:12]} printed {type(data).__name__}, expected an object"
                )
        except ProbeError as exc:
            self._documents.update(dict.fromkeys(copies.values(), exc))
            return
        for copy, path in copies.items():
            try:
                doc = document_dict(data.get(copy))
            except ValueError as exc:
                self._documents[path] = ProbeError(
                    f"read_document's answer for {path} has an unexpected shape: {str(exc).splitlines()[0]}"
                )
                continue
            if "error" in doc:
                doc["error"] = doc["error"].replace(copy, path)
            elif copy in keys and repeatable(doc):
                self.reads.put(keys[copy], doc)
            self._documents[path] = doc

    def _reading_keys(self, copies: list[str]) -> dict[str, str]:
        """Each copy's key in grader.document_reads (none for a sandbox that does not name its image)."""
        image = getattr(self.sandbox, "image_id", None)
        if not image:
            return {}
        keys = {}
        for copy in copies:
            try:
                keys[copy] = reading_key(image, copy, self.sandbox.read_file(copy, max_bytes=MAX_KEPT_BYTES))
            except Exception:  # noqa: BLE001 - the grader's own copy; unread here, the reader reads it
                continue
        return keys

    def changes(self) -> Changes | None:
        if not self._changes_read:
            try:
                self._changes = read_changes(self.sandbox, self.sql, self.chat, self.mail)
            except (ProbeError, StateError) as exc:
                self._changes = exc
            self._changes_read = True
        if isinstance(self._changes, ProbeError | StateError):
            raise type(self._changes)(str(self._changes))
        return self._changes

    def _run_json(
        self, cmd: list[str], what: str, *, timeout: float | None = None, env: dict[str, str] | None = None
    ) -> Any:
        where = f"{what} in {self.sandbox.id[:12]}"
        try:
            result = self.sandbox.exec(
                cmd, user=READER, timeout=timeout or self.timeout_s, max_output=MAX_OUTPUT_BYTES, env=env
            )
        except SandboxError as exc:
            raise ProbeError(f"{where} failed: {exc}") from None
        if result.truncated:
            raise ProbeError(f"{where} printed more than {MAX_OUTPUT_BYTES >> 20} MB")
        if not result.ok:
            reason = (
                "timed out"
                if result.timed_out
                else f"exit {result.exit_code}: {result.output.strip()[-300:]}"
            )
            raise ProbeError(f"{where} failed ({reason})".replace("\n", " "))
        return parse_json_output(result.output, where)

    def close(self) -> None:
        if self._sql is not None:
            self._sql.close()
            self._sql = None

    def __enter__(self) -> SandboxProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _small(copied: dict[str, Any]) -> bool:
    """Whether safe_copy's answer names a file small enough to fetch for its hash. The world's documents
    are far smaller; a large one the agent left is read as before, without a fetch of up to 64 MB first."""
    size = copied.get("copied")
    return isinstance(size, int) and size <= MAX_KEPT_BYTES


def parse_json_output(output: str, where: str) -> Any:
    """The JSON document a reader printed: the whole output, else its last line that parses.

    (Tools may log to stderr, interleaved.) Malformed or absurdly nested JSON is a ProbeError.
    """
    try:
        return json.loads(output)
    except (ValueError, RecursionError):
        for line in reversed(output.splitlines()):
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                continue
    raise ProbeError(f"{where} printed no readable JSON")


class StaticProbe:
    """A probe over fixed data, for unit tests of checks and for documentation examples.

    `sql` maps a query text to its rows, or to a StateError message (a str).
    """

    def __init__(
        self,
        *,
        sql: Mapping[str, list[dict[str, Any]] | str] | None = None,
        chat: ChatSnapshot | dict | None = None,
        mail: MailSnapshot | dict | None = None,
        files: Mapping[str, bytes] | None = None,
        documents: Mapping[str, dict[str, Any]] | None = None,
        changes: Changes | None = None,
    ):
        self._sql = dict(sql or {})
        self._changes = changes
        self._chat = ChatSnapshot.model_validate(chat or {})
        self._mail = MailSnapshot.model_validate(mail or {})
        self._files = {workspace_path(k): v for k, v in (files or {}).items()}
        self._documents = {workspace_path(k): v for k, v in (documents or {}).items()}
        self.prefetched: list[str] = []
        self.prefetched_queries: list[tuple[str, Any]] = []

    def sql(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        if query not in self._sql:
            raise StateError(f"query not known to this StaticProbe: {query}")
        rows = self._sql[query]
        if isinstance(rows, str):
            raise StateError(rows)
        return rows

    def chat(self) -> ChatSnapshot:
        return self._chat

    def mail(self) -> MailSnapshot:
        return self._mail

    def file(self, path: str) -> bytes | None:
        return self._files.get(workspace_path(path))

    def document(self, path: str) -> dict[str, Any]:
        return self._documents.get(workspace_path(path), {"error": f"{path}: no such file"})

    def prefetch(self, documents: Iterable[str] = (), queries: Iterable[tuple[str, Any]] = ()) -> None:
        self.prefetched.extend(documents)
        self.prefetched_queries.extend(queries)

    def changes(self) -> Changes | None:
        return self._changes
