"""Answer `foreach.seed_query` against the untouched seeded state, once, and cache the rows.

The guarantee that keeps `possible` fixed: seed queries never see the final
state. They run in a fresh sandbox started from the task's seed (or in a probe
the caller promises is untouched, e.g. the rollout's own sandbox before the
agent's first turn), and the rows are cached on disk under a key made of the
seed's bytes (world + task overlay) and the query text. Editing the seed or the
query changes the key; nothing the agent does can.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from core.errors import RubricError
from grader.errors import StateError
from grader.probe import Probe, SandboxProbe
from grader.rubric import Rubric

DEFAULT_CACHE = Path(".egym/expansions")


def seed_digest(task) -> str:
    """sha256 of the task's full seed (world overlay then task overlay), as applied to a container."""
    from gym.sandbox.overlay import overlay_tar
    from gym.tasks import world_of

    world = world_of(task)
    return hashlib.sha256(overlay_tar((world.seed, world.path), (task.seed, task.path))).hexdigest()


def _key(digest: str, query: str) -> str:
    return hashlib.sha256(f"{digest}\0{query}".encode()).hexdigest()


def seed_rows(
    rubric: Rubric, task, *, probe: Probe | None = None, cache_dir: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Rows of every seed query of `rubric`, from the cache or an untouched sandbox of `task`.

    Pass `probe` only if it reads a state the agent has not touched yet.
    """
    queries = rubric.seed_queries()
    if not queries:
        return {}
    if task is None:
        raise RubricError(f"{rubric.path or rubric.task}: seed_query expansion needs the task (pass task=...)")
    cache = Path(cache_dir or os.environ.get("EGYM_EXPANSION_CACHE") or DEFAULT_CACHE)
    digest = seed_digest(task)
    found: dict[str, list[dict[str, Any]]] = {}
    for query in queries:
        with contextlib.suppress(OSError, ValueError):
            found[query] = json.loads((cache / f"{_key(digest, query)}.json").read_text())
    missing = [q for q in queries if q not in found]
    if missing:
        found.update(_run(missing, task, probe, rubric))
        cache.mkdir(parents=True, exist_ok=True)
        for query in missing:
            path = cache / f"{_key(digest, query)}.json"
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(found[query], default=str))
            tmp.replace(path)
    return found


def _run(queries: list[str], task, probe: Probe | None, rubric: Rubric) -> dict[str, list[dict[str, Any]]]:
    if probe is not None:
        return {q: _query(probe, q, rubric) for q in queries}
    from gym.sandbox.launch import start_task_sandbox

    sandbox = start_task_sandbox(task, run_id="seed-expansion")
    try:
        with SandboxProbe(sandbox) as fresh:
            return {q: _query(fresh, q, rubric) for q in queries}
    finally:
        sandbox.close()


def _query(probe: Probe, query: str, rubric: Rubric) -> list[dict[str, Any]]:
    try:
        return probe.sql(query)
    except StateError as exc:
        raise RubricError(f"{rubric.path or rubric.task}: seed_query {query!r} fails on the seeded state: {exc}") from None
