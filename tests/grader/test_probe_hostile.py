"""The host trusts nothing it reads from the container: hostile reader output is an `error`, never a crash or a pass.

A fake sandbox plays a compromised or flooded container: the chat snapshot and the
document reader print huge, malformed, deeply nested or wrongly shaped output, and
files are over the size limit. No Docker needed.
"""

from __future__ import annotations

import json

import pytest

from grader.changes import READ_STATE
from grader.errors import ProbeError
from grader.probe import DOCUMENT_COPIES, MAX_OUTPUT_BYTES, SandboxProbe
from grader.rubric import Rubric
from grader.score import grade
from gym.sandbox.base import ExecResult
from gym.sandbox.docker_sandbox import FileTooLarge

GOOD_SNAPSHOT = {
    "users": [{"id": "u1", "username": "jordan.lee"}],
    "channels": [{"id": "c1", "name": "finance", "members": ["jordan.lee"]}],
    "posts": [{"id": "p1", "channel": "finance", "user": "jordan.lee", "message": "INV-09 is paid"}],
}
GOOD_SHEET = {
    "kind": "spreadsheet",
    "sheets": [{"name": "S", "cells": {"A1": {"value": 42, "formula": None, "text": "42"}}}],
}
NESTED = "[" * 200_000 + "]" * 200_000


class HostileSandbox:
    """Answers every exec with `output`; holds `files` (bytes, or an exception to raise)."""

    id = "f" * 64

    def __init__(self, output: str = "", *, truncated: bool = False, files: dict | None = None):
        self.output, self.truncated, self.files, self.written = output, truncated, files or {}, {}

    def exec(self, cmd, *, user="agent", timeout=60, max_output=16 << 20, **_):
        # The readers run as the grader user; only the change listing (read-state) runs as root.
        assert user == ("root" if cmd == READ_STATE else "grader"), (cmd, user)
        output = self.output
        if callable(output):  # documents: answer for the copies this call asks about
            output = output(cmd)
        return ExecResult(0, output, truncated=self.truncated)

    def read_file(self, path, *, max_bytes):
        found = self.files.get(path)
        if found is None:
            raise FileNotFoundError(path)
        if isinstance(found, Exception):
            raise found
        return found

    def write_file(self, path, data, *, user="agent", mode=0o644):
        assert user == "grader" and path.startswith(DOCUMENT_COPIES + "/")
        self.written[path] = data


@pytest.mark.parametrize(
    "output, truncated, reason",
    [
        ("x" * 1000, True, f"more than {MAX_OUTPUT_BYTES >> 20} MB"),
        ("{not json", False, "no readable JSON"),
        (NESTED, False, "no readable JSON"),
        (json.dumps({"users": "everyone", "posts": []}), False, "unexpected shape"),
        (json.dumps({**GOOD_SNAPSHOT, "extra": 1}), False, "unexpected shape"),
        (json.dumps([GOOD_SNAPSHOT]), False, "unexpected shape"),
    ],
)
def test_hostile_chat_snapshot_is_a_probe_error(output, truncated, reason):
    probe = SandboxProbe(HostileSandbox(output, truncated=truncated))
    with pytest.raises(ProbeError, match=reason):
        probe.chat()


def test_good_chat_snapshot_after_log_lines_is_read():
    probe = SandboxProbe(HostileSandbox("some warning on stderr\n" + json.dumps(GOOD_SNAPSHOT)))
    assert probe.chat().posts[0].message == "INV-09 is paid"


def _reader_answer(doc_for_copy):
    def answer(cmd):
        return json.dumps({path: doc_for_copy(path) for path in cmd if path.startswith(DOCUMENT_COPIES)})

    return answer


@pytest.mark.parametrize(
    "doc, reason",
    [
        ({"kind": "spreadsheet", "sheets": "all of them"}, "unexpected shape"),
        (
            {
                "kind": "spreadsheet",
                "sheets": [{"name": "S", "cells": {"A1": {"value": [1, 2], "text": ""}}}],
            },
            "unexpected shape",
        ),
        ({"kind": "text", "paragraphs": [], "tables": [], "order": []}, "unexpected shape"),
        ({"kind": "macro", "run": "rm -rf /"}, "unexpected shape"),
        (None, "unexpected shape"),
    ],
)
def test_hostile_document_answer_is_a_probe_error(doc, reason):
    sandbox = HostileSandbox(_reader_answer(lambda _: doc), files={"/workspace/report.xlsx": b"PK..."})
    probe = SandboxProbe(sandbox)
    with pytest.raises(ProbeError, match=reason):
        probe.document("report.xlsx")
    assert list(sandbox.written) == [
        f"{DOCUMENT_COPIES}/1/report.xlsx"
    ]  # the reader got a copy, never the original


def test_documents_are_read_from_copies_and_answers_mapped_back():
    files = {
        "/workspace/a.xlsx": b"a",
        "/workspace/sub/b.xlsx": b"b",
        "/workspace/huge.xlsx": FileTooLarge("big"),
    }
    sandbox = HostileSandbox(
        _reader_answer(
            lambda copy: (
                GOOD_SHEET if copy.endswith("a.xlsx") else {"error": f"cannot open {copy}: not a .xlsx file"}
            )
        ),
        files=files,
    )
    probe = SandboxProbe(sandbox)
    probe.prefetch(["a.xlsx", "sub/b.xlsx", "huge.xlsx", "missing.xlsx"])
    assert probe.document("a.xlsx") == GOOD_SHEET
    assert probe.document("sub/b.xlsx") == {"error": "cannot open /workspace/sub/b.xlsx: not a .xlsx file"}
    assert probe.document("missing.xlsx") == {"error": "no such file: /workspace/missing.xlsx"}
    with pytest.raises(ProbeError, match="big"):
        probe.document("huge.xlsx")
    assert sorted(sandbox.written.values()) == [b"a", b"b"]


def test_oversized_file_is_a_probe_error_not_absent():
    probe = SandboxProbe(HostileSandbox(files={"/workspace/notes.txt": FileTooLarge("over the limit")}))
    with pytest.raises(ProbeError, match="over the limit"):
        probe.file("notes.txt")


def test_items_that_read_hostile_state_are_errors_and_the_grade_is_incomplete():
    rubric = Rubric.model_validate(
        {
            "task": "mini/t",
            "items": [
                {
                    "id": "posted",
                    "description": "d",
                    "kind": "python",
                    "points": 2,
                    "check": "chat.message_exists",
                    "args": {"channel": "finance", "regex": "paid"},
                },
                {
                    "id": "no-leak",
                    "description": "d",
                    "kind": "python",
                    "points": -5,
                    "check": "chat.message_exists",
                    "negate": True,
                    "args": {"channel": "general", "regex": "salary"},
                },
                {
                    "id": "sheet",
                    "description": "d",
                    "kind": "python",
                    "points": 3,
                    "check": "documents.cell_value",
                    "args": {"path": "report.xlsx", "cell": "A1", "expected": 42},
                },
            ],
        }
    )
    sandbox = HostileSandbox(
        NESTED, files={"/workspace/report.xlsx": FileTooLarge("report.xlsx is over the limit")}
    )
    result = grade(rubric, SandboxProbe(sandbox))
    assert [i.status for i in result.items] == ["error"] * 6  # three items, and the damage section
    assert [i.id for i in result.items[3:]] == ["damage.rows", "damage.files", "damage.chat"]
    assert all("changes unreadable" in i.error for i in result.items[3:])
    assert result.incomplete and result.earned == 0
