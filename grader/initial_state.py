"""Answer `foreach.seed_query` against the untouched seeded state, once, and cache the rows.

The guarantee that keeps `possible` fixed: seed queries never see the final
state. They run on a probe of an untouched state: one the SeedSource opens
(a fresh sandbox of the task, gym.episode.TaskSeeds) or one the caller promises
is untouched. The rows are cached on disk under a key made of the seed's digest
(world + task overlay) and the query text. Editing the seed or the query changes
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
from grader.errors import StateError
from grader.probe import Probe
from grader.rubric import Rubric

DEFAULT_CACHE = Path(".egym/expansions")


class SeedSource(Protocol):
    """Where seed queries are answered: a task's seeded state before anyone acts."""

    @property
    def digest(self) -> str:
        """A hash of every seed byte: the cache key's first half."""
        ...

    def untouched(self) -> AbstractContextManager[Probe]:
        """A probe on a fresh, untouched copy of the seeded state (blocking; called in a worker thread)."""
        ...


def _key(digest: str, query: str) -> str:
    return hashlib.sha256(f"{digest}\0{query}".encode()).hexdigest()


def seed_rows(
    rubric: Rubric, seeds: SeedSource | None, *, probe: Probe | None = None, cache_dir: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Rows of every seed query of `rubric`, from the cache or an untouched state from `seeds`.

    Pass `probe` only if it reads a state the agent has not touched yet.
    """
    queries = rubric.seed_queries()
    if not queries:
        return {}
    if seeds is None:
        raise RubricError(f"{rubric.path or rubric.task}: seed_query expansion needs the task's seed (pass seeds=...)")
    cache = Path(cache_dir or os.environ.get("EGYM_EXPANSION_CACHE") or DEFAULT_CACHE)
    digest = seeds.digest
    found: dict[str, list[dict[str, Any]]] = {}
    for query in queries:
        with contextlib.suppress(OSError, ValueError):
            found[query] = json.loads((cache / f"{_key(digest, query)}.json").read_text())
    missing = [q for q in queries if q not in found]
    if missing:
        found.update(_run(missing, seeds, probe, rubric))
        cache.mkdir(parents=True, exist_ok=True)
        for query in missing:
            path = cache / f"{_key(digest, query)}.json"
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(found[query], default=str))
            tmp.replace(path)
    return found


def _run(queries: list[str], seeds: SeedSource, probe: Probe | None, rubric: Rubric) -> dict[str, list[dict[str, Any]]]:
    if probe is not None:
        return {q: _query(probe, q, rubric) for q in queries}
    with seeds.untouched() as fresh:
        return {q: _query(fresh, q, rubric) for q in queries}


def _query(probe: Probe, query: str, rubric: Rubric) -> list[dict[str, Any]]:
    try:
        return probe.sql(query)
    except StateError as exc:
        raise RubricError(f"{rubric.path or rubric.task}: seed_query {query!r} fails on the seeded state: {exc}") from None
