"""One episode, from a fresh sandbox to a grade: the rollout sequence, written once.

    async with open_episode(task, run_id="r1", rollout_id="r1-0") as episode:
        trajectory = await episode.play(policy, HarnessConfig(max_turns=8))
        grade = await episode.grade(trajectory)

Everything that runs a task goes through here: `gym.rollout.play_rollout` (egym
rollout, batch, calibrate, validate, the trainer's rollout source), `egym grade`'s replay,
the initial-query expansion and `ToolSession`, the same episode driven one tool
call at a time by a client outside the harness (the ORS server, gym/interop). The
container itself is started and removed only by gym.sandbox.launch.task_sandbox.
Storing stays with the caller: a rollout may run on a Ray worker and returns plain
data to the process that owns the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from core.errors import EgymError, SandboxError
from core.trajectory import AssistantTurn, Message, Step, ToolCall, ToolResult, Trajectory
from grader.grade import Grade
from grader.judge import Judge, JudgeConfig, JudgeOptions
from grader.probe import Probe, SandboxProbe
from gym.harness.config import HarnessConfig
from gym.tasks import Task, World, world_of

if TYPE_CHECKING:
    from grader.rubric import Rubric
    from gym.policies.base import Policy
    from gym.sandbox.base import Sandbox


@dataclass
class Episode:
    """A task's live sandbox, between start and removal."""

    task: Task
    world: World
    sandbox: Sandbox

    async def play(
        self,
        policy: Policy,
        harness: HarnessConfig | None = None,
        *,
        on_step: Callable[[Step], None] | None = None,
    ) -> Trajectory:
        """Run the harness with `policy` until the episode ends; always returns a Trajectory."""
        from gym.harness.loop import run_episode

        return await run_episode(self.sandbox, self.task, self.world, policy, harness, on_step=on_step)

    async def grade(
        self,
        trajectory: Trajectory | None = None,
        *,
        judge: Judge | None = None,
        judge_options: JudgeOptions | None = None,
        rubric: Rubric | None = None,
    ) -> Grade:
        """Seal the sandbox, then grade its state with the task's rubric (or `rubric`).

        Sealing first stops every process the agent left, so what is read is what the
        agent did by the end of its episode (docs/security.md). The judge defaults to
        the environment's (`make_judge`); without one, judge items are `error` and the
        grade is incomplete.
        """
        from grader.loader import load_rubric, rubric_for_task
        from grader.score import grade_async

        rubric = rubric or load_rubric(rubric_for_task(self.task))
        if judge is None:
            judge = make_judge(getattr(trajectory, "model", None), judge_options)
        ended = await asyncio.to_thread(self.sandbox.seal)
        probe = SandboxProbe(self.sandbox)
        try:
            grade = await grade_async(
                rubric, probe, trajectory, judge=judge, initial=TaskInitialState(self.task)
            )
            grade.meta["episode_end"] = ended
            grade.meta["state_diff"] = await asyncio.to_thread(self._state_diff, probe)
            return grade
        finally:
            await asyncio.to_thread(probe.close)

    @staticmethod
    def _state_diff(probe: SandboxProbe) -> str:
        """The final-state summary for people (never part of the score); a note saying why when unreadable."""
        try:
            changes = probe.changes()  # read once for the damage section already
        except Exception as exc:  # noqa: BLE001 - a summary must never break a grade
            return f"(final-state diff unavailable: {type(exc).__name__}: {exc})"
        return changes.summary() if changes is not None else ""


@contextlib.asynccontextmanager
async def open_episode(
    task: Task, *, run_id: str, rollout_id: str | None = None, world: World | None = None
) -> AsyncIterator[Episode]:
    """A fresh sandbox of `task` in its initial state as an Episode; the sandbox is removed on exit, even on cancel."""
    from gym.sandbox.launch import in_worker_thread, task_sandbox

    world = world or world_of(task)
    async with in_worker_thread(
        task_sandbox(task, world=world, run_id=run_id, rollout_id=rollout_id)
    ) as sandbox:
        yield Episode(task, world, sandbox)


class SessionEnded(EgymError):
    """A tool call on a step-wise episode that is over: a limit ended it, it was submitted, or closed."""


@dataclass
class _Pending:
    turn: AssistantTurn
    done: asyncio.Future[list[ToolResult]]


class _ClientTurns:
    """The policy of a ToolSession: each turn is a call its client sent; the step's results go back to it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.queue: asyncio.Queue[_Pending] = asyncio.Queue()
        # The first context and tool schemas: the harness asks for a turn once the tools are up.
        self.opened: asyncio.Future[tuple[list[Message], list[dict[str, Any]]]] = (
            asyncio.get_running_loop().create_future()
        )
        self.current: _Pending | None = None

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        if not self.opened.done():
            self.opened.set_result((list(messages), tools))
        self.current = await self.queue.get()
        return self.current.turn

    def on_step(self, step: Step) -> None:
        """The harness ran the turn (or a limit cut it short): hand its results to the waiting client."""
        if self.current is not None and not self.current.done.done():
            self.current.done.set_result(step.results)

    def drain(self) -> None:
        """The loop is over: turns still queued get no results."""
        while not self.queue.empty():
            pending = self.queue.get_nowait()
            if not pending.done.done():
                pending.done.set_result([])


class ToolSession:
    """One episode played a tool call at a time by a client outside the harness (an ORS server's agent).

        session = ToolSession(task, run_id="ors", rollout_id="ep-1")
        await session.start()                                   # container up, tools listed
        result = await session.call("db.query", {"sql": "SELECT 1"})
        grade = await session.submit("The answer.")             # grades; the container is removed
        await session.close()                                   # idempotent; also for an abandoned one

    It is the rollout lifecycle, not a second one: `open_episode`, then `Episode.play` with
    a policy whose turns are the client's calls (so the task's limits, faults and the
    trajectory are the harness's own), then `Episode.grade` at submit. The episode runs
    in a task of its own, so calls may come from any task (one per HTTP request).
    """

    def __init__(
        self,
        task: Task,
        *,
        run_id: str,
        rollout_id: str | None = None,
        harness: HarnessConfig | None = None,
        judge_options: JudgeOptions | None = None,
        policy_name: str = "client",
    ) -> None:
        self.task, self.run_id, self.rollout_id = task, run_id, rollout_id
        self.harness = harness or HarnessConfig()
        self.judge_options = judge_options
        self.policy_name = policy_name
        self.messages: list[Message] = []  # the system prompt and the task, as a policy would see them
        self.tools: list[dict[str, Any]] = []  # OpenAI-format schemas, as a policy would see them
        self.trajectory: Trajectory | None = None  # set once the harness loop is over
        self._calls = 0
        self._turns: _ClientTurns  # made by start(): its future needs the running loop
        self._runner: asyncio.Task[Grade] | None = None
        self._played = asyncio.Event()
        self._grade_wanted = asyncio.Event()
        self._closed = False

    @property
    def ended(self) -> str | None:
        """Why the harness loop is over (`answered`, `turn_limit`, `closed`...), or None while calls are taken."""
        if self.trajectory is not None:
            return self.trajectory.stop_reason
        return "closed" if self._closed or self.done else None

    @property
    def done(self) -> bool:
        """Its container is gone: graded, closed, or it could not start."""
        return self._runner is not None and self._runner.done()

    @property
    def turns_left(self) -> int:
        return max(self.harness.limits_for(self.task).max_turns - self._calls, 0)

    async def start(self) -> None:
        """Start the container and the task's tools; SandboxError (container removed) when that fails."""
        self._turns = _ClientTurns(self.policy_name)
        self._runner = asyncio.create_task(self._run())
        try:
            await asyncio.wait({self._runner, self._turns.opened}, return_when=asyncio.FIRST_COMPLETED)
            if not self._turns.opened.done():  # the episode ended before its first turn
                raise SandboxError(f"{self.task.key}: the episode could not start: {self._failure()}")
        except BaseException:
            await self.close()
            raise
        self.messages, self.tools = self._turns.opened.result()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool call as one harness turn; SessionEnded when the episode no longer takes calls."""
        self._check_open()
        self._calls += 1
        call = ToolCall(id=f"call-{self._calls}", name=name, arguments=json.dumps(arguments))
        pending = _Pending(AssistantTurn(tool_calls=[call]), asyncio.get_running_loop().create_future())
        self._turns.queue.put_nowait(pending)
        results = await pending.done
        if not results:  # a limit cut the turn short, or the loop ended before taking it
            await self._played.wait()
            self._check_open()
            raise SessionEnded(f"{self.task.key}: the call was not run; the episode is over")
        return results[0]

    async def submit(self, answer: str) -> Grade:
        """End the episode with `answer` as its final answer (unless a limit ended it first) and grade it.

        The first submit decides; later ones return the same grade.
        """
        if self._runner is None:
            raise SessionEnded(f"{self.task.key}: the episode was never started")
        if not self._grade_wanted.is_set():
            if not self._played.is_set():
                done = asyncio.get_running_loop().create_future()
                self._turns.queue.put_nowait(_Pending(AssistantTurn(content=answer), done))
            self._grade_wanted.set()
        closed = SessionEnded(f"{self.task.key}: the episode was closed before it was graded")
        if self._runner.cancelled():
            raise closed
        try:
            return await asyncio.shield(self._runner)  # a caller that goes away does not stop the grading
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._runner.cancelled() and not (task and task.cancelling()):
                raise closed from None
            raise

    async def close(self) -> None:
        """Remove the container now, graded or not (a deleted or abandoned episode); a no-op once it is gone."""
        self._closed = True
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            await asyncio.wait({self._runner})  # open_episode removes the container on cancel

    async def _run(self) -> Grade:
        async with open_episode(self.task, run_id=self.run_id, rollout_id=self.rollout_id) as episode:
            try:
                self.trajectory = await episode.play(self._turns, self.harness, on_step=self._turns.on_step)
            finally:
                self._played.set()
                self._turns.drain()
            if not self._turns.opened.done():  # the tools never came up: nothing to play or grade
                raise SandboxError(self.trajectory.error or "the episode ended before its first turn")
            await self._grade_wanted.wait()  # the container stays up until the client submits or goes
            return await episode.grade(self.trajectory, judge_options=self.judge_options)

    def _check_open(self) -> None:
        if self._runner is None:
            raise SessionEnded(f"{self.task.key}: the episode was never started")
        if self._grade_wanted.is_set():
            raise SessionEnded(f"{self.task.key}: the episode was submitted; it takes no more calls")
        if self.ended == "closed":
            raise SessionEnded(f"{self.task.key}: the episode was closed")
        if self.ended is not None:
            limits = self.harness.limits_for(self.task)
            why = {
                "turn_limit": f"reached its turn limit ({limits.max_turns} calls)",
                "time_limit": f"reached its time limit ({limits.time_limit_s:g} s)",
            }.get(self.ended, f"ended ({self.ended})")
            raise SessionEnded(f"{self.task.key}: the episode {why}; submit to grade what was done")

    def _failure(self) -> str:
        runner = self._runner
        exc = runner.exception() if runner is not None and runner.done() and not runner.cancelled() else None
        return str(exc) if exc is not None else "it was closed"


class TaskInitialState:
    """grader.initial_state.InitialState for a task: its digest, and probes on untouched sandboxes of it."""

    def __init__(self, task: Task):
        self.task = task

    @cached_property
    def digest(self) -> str:
        """sha256 of the task's full initial state (world overlay then task overlay), as applied to a container."""
        from gym.sandbox.overlay import overlay_tar

        world = world_of(self.task)
        return hashlib.sha256(
            overlay_tar((world.initial_state, world.path), (self.task.initial_state, self.task.path))
        ).hexdigest()

    @contextlib.contextmanager
    def untouched(self) -> Iterator[Probe]:
        from gym.sandbox.launch import task_sandbox

        with task_sandbox(self.task, run_id="initial-expansion") as sandbox, SandboxProbe(sandbox) as probe:
            yield probe


def make_judge(policy_model: str | None = None, options: JudgeOptions | None = None) -> Judge | None:
    """The judge from the environment (EGYM_JUDGE_* / OPENAI_*) and a command's options; None without a model.

    `hf:NAME` judge models run in this process on the shared engine (gym.models).
    """
    from gym.models.judge_backend import generate_locally

    overrides = options.model_dump(exclude_defaults=True) if options is not None else {}
    config = JudgeConfig.from_env(**overrides)
    return Judge(config, policy_model=policy_model, local=generate_locally) if config.model else None
