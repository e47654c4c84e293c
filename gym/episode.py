"""One episode, from a fresh sandbox to a grade: the rollout sequence, written once.

    async with open_episode(task, run_id="r1", rollout_id="r1-0") as episode:
        trajectory = await episode.play(policy, HarnessConfig(max_turns=8))
        grade = await episode.grade(trajectory)

Everything that runs a task goes through here: `run_rollout` (egym rollout,
batch, calibrate, validate), the trainer's rollout source, `egym grade`'s replay
and the initial-query expansion. The container itself is started and removed only
by gym.sandbox.launch.task_sandbox. Storing stays with the caller: a rollout may
run on a Ray worker and returns plain data to the process that owns the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from core.trajectory import Step, Trajectory
from grader.grade import Grade
from grader.judge import Judge, JudgeConfig, JudgeOptions
from grader.probe import Probe, SandboxProbe
from gym.harness.config import HarnessConfig
from gym.tasks import Task, World, world_of


@dataclass
class Episode:
    """A task's live sandbox, between start and removal."""

    task: Task
    world: World
    sandbox: Any  # gym.sandbox.base.Sandbox

    async def play(
        self,
        policy: Any,
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
        rubric: Any = None,
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
