"""What every environment server holds, whatever protocol it speaks: its tasks and its live episodes.

    catalog = TaskCatalog(tasks)                   # by key and by split, with "did you mean" errors
    table = EpisodeTable(run_id="ors-1a2b", policy_name="ors")
    async with table.running():                    # reaps idle episodes; closes all on exit
        table.open("ep-1", catalog.get("acme/product-price-l0-s3"))   # the container starts in the background
        session = await table.ready("ep-1")        # a gym.episode.ToolSession, once its tools are up
        with table.busy("ep-1"):                   # never reaped while a call runs
            result = await session.call("db.query", {"sql": "SELECT 1"})
        await table.close("ep-1", "deleted by its client")

Each adapter (ORS, OpenEnv, NeMo Gym) maps these to its own wire: `InteropError.status` is
the HTTP status the condition has in all of them (404 unknown, 409 exists, 410 gone, 503 full
or failed to start). An episode with no request for `idle_timeout_s` (its client is gone) is
closed and its container removed; an ended episode is remembered, so a late request hears
why it ended rather than "unknown".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from core.errors import EgymError
from core.validation import closest
from grader.judge import JudgeOptions
from gym.episode import ToolSession
from gym.harness.config import HarnessConfig
from gym.tasks import Task

SPLITS = ("train", "val", "test")
GONE_KEPT = 10_000  # ended episodes remembered for their late requests
log = logging.getLogger(__name__)


class InteropError(EgymError):
    """A request an environment server refuses; `status` is its HTTP status in every protocol."""

    status = 400


class UnknownEpisode(InteropError):
    status = 404


class UnknownTask(InteropError):
    status = 404


class EpisodeExists(InteropError):
    status = 409


class EpisodeGone(InteropError):
    status = 410


class ServerFull(InteropError):
    status = 503


class EpisodeFailed(InteropError):
    """Its container or tools could not start."""

    status = 503


class TaskCatalog:
    """The tasks a server serves: by key (`acme/product-price-l0-s3`) and by egym split."""

    def __init__(self, tasks: list[Task]) -> None:
        self.by_key = {task.key: task for task in tasks}
        self.by_split = {split: [t for t in tasks if t.split == split] for split in SPLITS}

    def __len__(self) -> int:
        return len(self.by_key)

    def get(self, key: str) -> Task:
        if key not in self.by_key:
            hint = closest(key, self.by_key, list_known=len(self.by_key) <= 10)
            raise UnknownTask(f"unknown task {key!r}: this server serves {len(self.by_key)} tasks{hint}")
        return self.by_key[key]

    def split(self, split: str) -> list[Task]:
        if split not in self.by_split:
            raise InteropError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
        return self.by_split[split]

    def indexed(self, split: str, index: int) -> Task:
        tasks = self.split(split)
        if not 0 <= index < len(tasks):
            raise InteropError(f"index {index} is out of range: split {split!r} has {len(tasks)} tasks")
        return tasks[index]


@dataclass
class LiveEpisode:
    """One episode a server holds, from its opening to its removal."""

    session: ToolSession
    starting: asyncio.Task[None]
    seen: float = field(default_factory=time.monotonic)
    busy: int = 0  # requests or calls in progress: never idle while one runs


class EpisodeTable:
    """Live episodes by id: opened in the background, capped, reaped when idle, closed on shutdown."""

    def __init__(
        self,
        *,
        run_id: str,
        policy_name: str,
        harness: HarnessConfig | None = None,
        judge_options: JudgeOptions | None = None,
        idle_timeout_s: float = 300.0,
        max_episodes: int = 32,
        how_to_open: str = "",
    ) -> None:
        self.run_id, self.policy_name = run_id, policy_name
        self.how_to_open = how_to_open  # the protocol's way, told to a client that names an unknown episode
        self.harness, self.judge_options = harness, judge_options
        self.idle_timeout_s, self.max_episodes = idle_timeout_s, max_episodes
        self.live: dict[str, LiveEpisode] = {}
        self.gone: dict[str, str] = {}  # episode id -> why it ended

    def open(self, episode_id: str, task: Task) -> LiveEpisode:
        """Start the episode's container in the background; `ready` waits for it."""
        if episode_id in self.live or episode_id in self.gone:
            raise EpisodeExists(f"episode {episode_id!r} exists already")
        if sum(not live.session.done for live in self.live.values()) >= self.max_episodes:
            raise ServerFull(f"this server runs its maximum of {self.max_episodes} episodes; retry later")
        session = ToolSession(
            task,
            run_id=self.run_id,
            rollout_id=episode_id,
            harness=self.harness,
            judge_options=self.judge_options,
            policy_name=self.policy_name,
        )
        starting = asyncio.create_task(session.start())
        starting.add_done_callback(lambda t: t.cancelled() or t.exception())  # read here, reported on use
        self.live[episode_id] = live = LiveEpisode(session, starting)
        return live

    def find(self, episode_id: str) -> LiveEpisode:
        """The live episode (its idle clock restarts); UnknownEpisode, or EpisodeGone saying why it ended."""
        live = self.live.get(episode_id)
        if live is None:
            if episode_id in self.gone:
                raise EpisodeGone(self.gone[episode_id])
            raise UnknownEpisode(
                f"unknown episode {episode_id!r}" + (f": {self.how_to_open}" if self.how_to_open else "")
            )
        live.seen = time.monotonic()
        return live

    async def ready(self, episode_id: str) -> ToolSession:
        """The episode's session once its container and tools are up; EpisodeFailed when they did not come up."""
        live = self.find(episode_id)
        with self.busy(episode_id):
            await asyncio.wait({live.starting})
        if live.starting.cancelled():
            self.find(episode_id)  # EpisodeGone: it was deleted or closed while starting
            raise EpisodeGone(f"episode {episode_id!r} was closed while it started")
        if (exc := live.starting.exception()) is not None:
            raise EpisodeFailed(f"episode {episode_id!r} could not start: {exc}".replace("\n", " "))
        return live.session

    @contextlib.contextmanager
    def busy(self, episode_id: str) -> Iterator[LiveEpisode]:
        """Hold the episode as in use (not idle) for the block; its idle clock restarts when it ends."""
        live = self.find(episode_id)
        live.busy += 1
        try:
            yield live
        finally:
            live.busy -= 1
            live.seen = time.monotonic()

    async def close(self, episode_id: str, why: str) -> None:
        """Remove the episode and its container; later requests for it hear `why`. Unknown ids: UnknownEpisode."""
        live = self.live.pop(episode_id, None)
        if live is None:
            if episode_id not in self.gone:
                raise UnknownEpisode(f"unknown episode {episode_id!r}")
            return
        self.gone[episode_id] = why
        while len(self.gone) > GONE_KEPT:
            del self.gone[next(iter(self.gone))]
        live.starting.cancel()
        await asyncio.wait({live.starting})
        await live.session.close()  # the container is removed here

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[EpisodeTable]:
        """Serve: reap idle episodes in the background; on exit close every episode still held."""
        reaper = asyncio.create_task(self._reap())
        try:
            yield self
        finally:
            reaper.cancel()
            await asyncio.gather(
                *(self.close(episode_id, "the server stopped") for episode_id in list(self.live)),
                return_exceptions=True,
            )

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, self.idle_timeout_s / 4))
            now = time.monotonic()
            for episode_id, live in list(self.live.items()):
                idle = live.busy == 0 and live.starting.done() and now - live.seen > self.idle_timeout_s
                if idle and self.live.get(episode_id) is live:
                    why = (
                        f"episode {episode_id!r} was closed after {self.idle_timeout_s:g} s without a request"
                    )
                    try:
                        await self.close(episode_id, why)
                    except Exception:  # one bad close must not stop the reaping
                        log.exception("closing idle episode %s", episode_id)


class EnvironmentServer:
    """An `egym serve-env` server: its tasks and episode table. A protocol's server subclasses it, names
    itself (`label`, `policy_name`, `how_to_open`) and builds its ASGI application in `app()`."""

    label = "environment server"  # shown when it starts
    policy_name = "client"  # the trajectories' policy name
    how_to_open = ""  # said to a client that names an unknown episode

    def __init__(
        self,
        tasks: list[Task],
        *,
        run_id: str,
        harness: HarnessConfig | None = None,
        judge_options: JudgeOptions | None = None,
        idle_timeout_s: float = 300.0,
        max_episodes: int = 32,
    ) -> None:
        self.catalog = TaskCatalog(tasks)
        self.episodes = EpisodeTable(
            run_id=run_id,
            policy_name=self.policy_name,
            harness=harness,
            judge_options=judge_options,
            idle_timeout_s=idle_timeout_s,
            max_episodes=max_episodes,
            how_to_open=self.how_to_open,
        )

    @property
    def run_id(self) -> str:
        return self.episodes.run_id
