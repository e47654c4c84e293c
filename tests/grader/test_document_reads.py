"""A document read before is not read again: only the same bytes, image and day reuse a reading.

The fake sandbox (test_probe_hostile.HostileSandbox) copies files as safe_copy does and
counts the reader's runs; the real reader and LibreOffice are exercised by every Docker
test that grades an office task.
"""

from __future__ import annotations

import datetime
import json

import pytest

import grader.document_reads
from core.content_cache import ContentCache
from grader.document_reads import reading_key, repeatable
from grader.probe import DOCUMENT_COPIES, MAX_KEPT_BYTES, SandboxProbe
from tests.grader.test_probe_hostile import HostileSandbox


def sheet(value, formula=None):
    return {
        "kind": "spreadsheet",
        "sheets": [{"name": "S", "cells": {"A1": {"value": value, "formula": formula, "text": str(value)}}}],
    }


class ReaderSandbox(HostileSandbox):
    """A sandbox of image `image_id` whose reader answers `doc_of(bytes)` for each copy, counting its runs."""

    def __init__(self, files, image_id="sha256:world", doc_of=lambda data: sheet(len(data))):
        super().__init__(self._answer, files=files)
        self.image_id, self.doc_of = image_id, doc_of
        self.reads: list[list[str]] = []  # the copies each reader run was asked about
        self.fetched: list[str] = []  # the copies the host fetched to hash

    def read_file(self, path, *, max_bytes):
        self.fetched.append(path)
        return super().read_file(path, max_bytes=max_bytes)

    def _answer(self, cmd):
        copies = [path for path in cmd if path.startswith(DOCUMENT_COPIES)]
        self.reads.append(copies)
        return json.dumps({copy: self.doc_of(self.copies[copy]) for copy in copies})


def kept(cache: ContentCache) -> int:
    return sum(1 for _ in cache.folder.rglob("*.json"))


@pytest.fixture(autouse=True)
def reads(monkeypatch, tmp_path):
    fresh = ContentCache(tmp_path / "document-reads")
    monkeypatch.setattr(grader.document_reads, "READS", fresh)  # what every probe uses by default
    return fresh


def read(sandbox, *paths):
    probe = SandboxProbe(sandbox)
    probe.prefetch(paths)
    return [probe.document(path) for path in paths]


def test_the_same_bytes_in_another_sandbox_of_the_image_are_not_read_again():
    first = ReaderSandbox({"/workspace/q1.xlsx": b"12345"})
    second = ReaderSandbox({"/workspace/q1.xlsx": b"12345"})
    assert read(first, "q1.xlsx") == [sheet(5)]
    doc = read(second, "q1.xlsx")[0]
    assert (doc, len(first.reads), second.reads) == (sheet(5), 1, [])
    doc["sheets"].clear()  # a check that edits what it got leaves the kept reading alone
    assert read(ReaderSandbox({"/workspace/q1.xlsx": b"12345"}), "q1.xlsx") == [sheet(5)]


def test_only_the_changed_document_is_read_again():
    read(ReaderSandbox({"/workspace/a.xlsx": b"aa", "/workspace/b.xlsx": b"bb"}), "a.xlsx", "b.xlsx")
    sandbox = ReaderSandbox({"/workspace/a.xlsx": b"aa", "/workspace/b.xlsx": b"the agent's edit"})
    assert read(sandbox, "a.xlsx", "b.xlsx") == [sheet(2), sheet(16)]
    ((asked,),) = sandbox.reads
    assert asked.endswith("/b.xlsx")


@pytest.mark.parametrize(
    "other",
    [
        ReaderSandbox({"/workspace/q1.xlsx": b"12345"}, image_id="sha256:another-world"),
        ReaderSandbox({"/workspace/q1.xlsx": b"12345"}, image_id=None),  # a sandbox that names no image
        ReaderSandbox({"/workspace/q1.ods": b"12345"}),  # the same bytes under another format's name
    ],
)
def test_another_image_or_format_is_read_anew(other):
    read(ReaderSandbox({"/workspace/q1.xlsx": b"12345"}), "q1.xlsx")
    read(other, *[path.removeprefix("/workspace/") for path in other.files])
    assert len(other.reads) == 1


@pytest.mark.parametrize(
    "answer",
    [
        {"error": "too slow: LibreOffice did not finish reading it within 60 s"},
        sheet(0.42, "=RAND()"),
        sheet(46000.5, "=NOW()"),
        sheet(7, "='file:///workspace/other.ods'#$Sheet1.A1"),
    ],
)
def test_answers_another_reading_may_not_repeat_are_not_kept(answer, reads):
    for _ in range(2):
        sandbox = ReaderSandbox({"/workspace/q1.xlsx": b"12345"}, doc_of=lambda _: answer)
        read(sandbox, "q1.xlsx")
        assert len(sandbox.reads) == 1
    assert not reads.folder.exists()


def test_a_probe_given_its_own_readings_shares_nothing_with_the_default(reads, tmp_path):
    read(ReaderSandbox({"/workspace/q1.xlsx": b"12345"}), "q1.xlsx")
    sandbox, own = ReaderSandbox({"/workspace/q1.xlsx": b"12345"}), ContentCache(tmp_path / "own")
    probe = SandboxProbe(sandbox, reads=own)
    assert probe.document("q1.xlsx") == sheet(5)
    assert (len(sandbox.reads), kept(own), kept(reads)) == (1, 1, 1)


def test_a_large_document_is_read_each_time_without_being_fetched():
    for _ in range(2):
        sandbox = ReaderSandbox({"/workspace/big.xlsx": b"x" * (MAX_KEPT_BYTES + 1)})
        assert read(sandbox, "big.xlsx") == [sheet(MAX_KEPT_BYTES + 1)]
        assert (len(sandbox.reads), sandbox.fetched) == (1, [])


def test_a_sheet_of_todays_date_is_kept_for_the_day_only(reads):
    assert repeatable(sheet(46000, "=TODAY()-B1"))
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    assert reading_key("sha256:world", "q1.xlsx", b"12345") == reading_key(
        "sha256:world", "q1.xlsx", b"12345", day=today
    )
    another_day = reading_key("sha256:world", "q1.xlsx", b"12345", day="2000-01-01")
    reads.put(another_day, sheet(45000, "=TODAY()-B1"))
    sandbox = ReaderSandbox({"/workspace/q1.xlsx": b"12345"})
    assert read(sandbox, "q1.xlsx") == [sheet(5)] and len(sandbox.reads) == 1
