"""Documents already read, by what decides the reading: the world image, the day and the file's bytes.

Most documents of a rollout are the ones the world started with (a null, baseline or cheat
rollout, a weak policy's), and they read the same every time: starting LibreOffice to read
them again is about 2.6 s of each office grade. The probe (grader.probe) hashes the grader's
own copy of each file and starts the reader only for files not read before. Readings are kept
on disk (core.content_cache, as the judge's verdicts are), under .egym/document-reads.

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
import posixpath
from pathlib import Path
from typing import Any

import regex

from core.content_cache import ContentCache, content_key

# Formulas whose value a second reading of the same bytes may not repeat (Excel syntax, as the reader prints).
_UNREPEATABLE = regex.compile(r"\b(NOW|RAND|RANDBETWEEN|RANDARRAY)\s*\(|file:|\[", regex.IGNORECASE)


def reading_key(image_id: str, name: str, data: bytes, *, day: str | None = None) -> str:
    """The key of reading `data`, named `name`, in a sandbox of `image_id` (today, unless `day`)."""
    day = day or datetime.datetime.now(datetime.UTC).date().isoformat()
    return content_key([image_id, posixpath.splitext(name)[1], day, hashlib.sha256(data).hexdigest()])


def repeatable(doc: dict[str, Any]) -> bool:
    """Whether reading the same bytes again (the same day, the same image) gives this answer."""
    if "error" in doc:
        return False
    formulas = (
        cell.get("formula") or "" for sheet in doc.get("sheets") or [] for cell in sheet["cells"].values()
    )
    return not any(_UNREPEATABLE.search(formula) for formula in formulas)


READS = ContentCache(Path(".egym/document-reads"))  # what every probe uses unless given its own
