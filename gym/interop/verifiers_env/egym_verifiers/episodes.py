"""egym's episodes over the Open Reward Standard, through the official client (`ors-sdk`).

`egym serve-env --protocol ors` holds the episodes: one container each, egym's harness
limits, and the grade at `submit`. The eval process opens an episode and deletes it
(`opened`); the tool server and the reward speak to it by id (`attached`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ors.client import AsyncORS
from ors.client import Task as OrsTask
from ors.client.environment import AsyncEnvironment
from ors.client.session import AsyncSession

ENV_NAME = "egym"  # the one environment an egym ORS server serves
SUBMIT = "submit"  # egym's tool that ends the episode and grades it


@asynccontextmanager
async def environment(base_url: str) -> AsyncIterator[AsyncEnvironment]:
    ors = AsyncORS(base_url=base_url)  # held to the end: the client closes its HTTP sessions when dropped
    env = ors.environment(ENV_NAME)
    try:
        yield env
    finally:
        await env.client.close()


async def task_specs(base_url: str, split: str) -> list[dict[str, Any]]:
    """The server's tasks in `split`, as it lists them (id, title, split, apps, tags)."""
    async with environment(base_url) as env:
        return [dict(task.task_spec) for task in await env.list_tasks(split)]


@asynccontextmanager
async def opened(base_url: str, spec: dict[str, Any]) -> AsyncIterator[AsyncSession]:
    """A new episode of the task `spec`, up (its container started); deleted on exit, on error too."""
    async with environment(base_url) as env, env.session(task=OrsTask(ENV_NAME, spec)) as session:
        yield session


def attached(env: AsyncEnvironment, episode: str) -> AsyncSession:
    """The client session of an episode another owner opened: it calls tools, its owner deletes it."""
    session = env.session(task=OrsTask(ENV_NAME, {}))
    session.sid = episode
    return session
