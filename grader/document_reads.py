"""Documents already read, by what decides the reading: the world image, the day and the file's bytes.

Most documents of a rollout are the ones the world started with (a null, baseline or cheat
rollout, a weak policy's), and they read the same every time: starting LibreOffice to read
them again is about 2.6 s of each office grade. The probe (grader.probe) hashes the grader's
own copy of each file and starts the reader only for files it has not read in this process.

What a reading depends on, and so the key: the image (its LibreOffice and its reader code),
the file's name extension (the format is chosen by it), the UTC day (a TODAY() or a date field
reads as the day it is read) and the SHA-256 of the bytes. Never kept: an error answer (it may
depend on the reader's time budget), and a spreadsheet whose formulas read the clock at a finer
grain than the day, draw random numbers or link to other files. Files over 4 MB are read each
time, never fetched to be hashed (grader.probe.MAX_KEPT_BYTES).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import posixpath
import threading
from typing import Any

import regex

MAX_CHARS = 64 << 20  # all kept answers together, as JSON
# Formulas whose value a second reading of the same bytes may not repeat (Excel syntax, as the reader prints).
_UNREPEATABLE = regex.compile(r"\b(NOW|RAND|RANDBETWEEN|RANDARRAY)\s*\(|file:|\[", regex.IGNORECASE)

Key = tuple[str, str, str, str]


def reading_key(image_id: str, name: str, data: bytes) -> Key:
    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    return (image_id, posixpath.splitext(name)[1], day, hashlib.sha256(data).hexdigest())


def repeatable(doc: dict[str, Any]) -> bool:
    """Whether reading the same bytes again (the same day, the same image) gives this answer."""
    if "error" in doc:
        return False
    formulas = (
        cell.get("formula") or "" for sheet in doc.get("sheets") or [] for cell in sheet["cells"].values()
    )
    return not any(_UNREPEATABLE.search(formula) for formula in formulas)


class DocumentReads:
    """A bounded map from reading_key to the reader's validated answer; each get is a fresh copy."""

    def __init__(self, max_chars: int = MAX_CHARS):
        self.max_chars = max_chars
        self._answers: dict[Key, str] = {}  # insertion order: the oldest is dropped first
        self._chars = 0
        self._lock = threading.Lock()  # grades of one process run in worker threads

    def get(self, key: Key) -> dict[str, Any] | None:
        with self._lock:
            found = self._answers.get(key)
        return None if found is None else json.loads(found)

    def put(self, key: Key, doc: dict[str, Any]) -> None:
        if not repeatable(doc):
            return
        text = json.dumps(doc)
        if len(text) > self.max_chars:
            return
        with self._lock:
            if key in self._answers:
                return
            while self._answers and self._chars + len(text) > self.max_chars:
                self._chars -= len(self._answers.pop(next(iter(self._answers))))
            self._answers[key] = text
            self._chars += len(text)

    def __len__(self) -> int:
        return len(self._answers)


READS = DocumentReads()  # one per process: the rollouts of a batch, a validate run, a training run
