"""Answer `foreach.initial_query` against the task's untouched initial state, once, and cache the rows.

The guarantee that keeps `possible` fixed: initial queries never see the final
state. They run on a probe of an untouched state: one the InitialState opens
(a fresh sandbox of the task, gym.episode.TaskInitialState) or one the caller promises
is untouched. The rows are cached on disk under a key made of the initial state's
digest (world + task overlay) and the query text. Editing either changes
the key; nothing the agent does can.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from core.errors import RubricError
from core.files import write_text_atomic
from grader.errors import StateError
from grader.probe import Probe
from grader.rubric import Rubric

DEFAULT_CACHE = Path(".egym/expansions")


class InitialState(Protocol):
    """Where initial queries are answered: a task's state before anyone acts."""

    @property
    def digest(self) -> str:
        """A hash of every byte of the initial state: the cache key's first half."""
        ...

    def untouched(self) -> AbstractContextManager[Probe]:
        """A probe on a fresh, untouched copy of the initial state (blocking; called in a worker thread)."""
        ...


def _key(digest: str, query: str) -> str:
    return hashlib.sha256(f"{digest}\0{query}".encode()).hexdigest()


def initial_rows(
    rubric: Rubric, initial: InitialState | None, *, probe: Probe | None = None, cache_dir: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Rows of every initial query of `rubric`, from the cache or an untouched state from `initial`.

    Pass `probe` only if it reads a state the agent has not touched yet.
    """
    queries = rubric.initial_queries()
    if not queries:
        return {}
    if initial is None:
        raise RubricError(
            f"{rubric.path or rubric.task}: initial_query expansion needs the task's initial state (pass initial=...)"
        )
    cache = Path(cache_dir or os.environ.get("EGYM_EXPANSION_CACHE") or DEFAULT_CACHE)
    digest = initial.digest
    found: dict[str, list[dict[str, Any]]] = {}
    for query in queries:
        with contextlib.suppress(OSError, ValueError):
            found[query] = json.loads((cache / f"{_key(digest, query)}.json").read_text())
    missing = [q for q in queries if q not in found]
    if missing:
        found.update(_run(missing, initial, probe, rubric))
        cache.mkdir(parents=True, exist_ok=True)
        for query in missing:
            path = cache / f"{_key(digest, query)}.json"
            write_text_atomic(path, json.dumps(found[query], default=str))
    return found


def _run(
    queries: list[str], initial: InitialState, probe: Probe | None, rubric: Rubric
) -> dict[str, list[dict[str, Any]]]:
    if probe is not None:
        return {q: _query(probe, q, rubric) for q in queries}
    with initial.untouched() as fresh:
        return {q: _query(fresh, q, rubric) for q in queries}


def _query(probe: Probe, query: str, rubric: Rubric) -> list[dict[str, Any]]:
    try:
        return probe.sql(query)
    except StateError as exc:
        raise RubricError(
            f"{rubric.path or rubric.task}: initial_query {query!r} fails on the initial state: {exc}"
        ) from None
