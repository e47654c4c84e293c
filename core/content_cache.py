"""An on-disk cache keyed by the hash of what was asked: a model is never paid twice for the same question.

Used by the LLM judge (verdicts), the model-backed coworkers (replies) and the grader's document readings, each in its own folder.
A cache that cannot be written only costs another request, never correctness.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from core.files import write_text_atomic


def content_key(question: Any) -> str:
    """A stable hex key of a JSON-serialisable question (dict keys in any order)."""
    return hashlib.sha256(json.dumps(question, sort_keys=True).encode()).hexdigest()


class ContentCache:
    """JSON values under `folder/ab/abcdef….json`; `folder=None` caches nothing."""

    def __init__(self, folder: Path | None):
        self.folder = folder

    def _path(self, key: str) -> Path | None:
        return self.folder / key[:2] / f"{key}.json" if self.folder else None

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            return json.loads(path.read_text()) if path else None
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(value, ensure_ascii=False))
        except OSError:
            pass  # read-only: the next request is asked again
