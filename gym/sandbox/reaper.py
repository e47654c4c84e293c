"""Remove containers whose owner process is gone (`egym gc`, and the start of every batch)."""

from __future__ import annotations

import docker.errors

from core.owner import owner_alive
from gym.sandbox.docker_client import LABEL, client


def reap(*, everything: bool = False, run_id: str | None = None) -> list[str]:
    """Remove orphaned egym containers (or all of them, or all of one run); returns their ids."""
    filters = {"label": [LABEL] + ([f"egym.run={run_id}"] if run_id else [])}
    removed = []
    for container in client().containers.list(all=True, filters=filters, ignore_removed=True):
        owner = container.labels.get("egym.owner", "")
        if everything or run_id or not owner_alive(owner):
            try:
                container.remove(force=True, v=True)
                removed.append(container.id)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if "already in progress" not in str(exc):  # someone else is removing it: fine
                    raise
    return removed
