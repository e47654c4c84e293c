"""One rollout: start the task's sandbox, play a policy, grade the final state, and save what happened.

The rollout path, written once:

    play_rollout(task, policy)   sandbox -> harness -> grader -> a RolloutOutcome (never raises)
    run_rollout(spec)            the task and the policy from a RolloutSpec, then play_rollout:
                                 what every executor runs (asyncio here, a Ray task on a cluster node)
    run_and_save(store, row, spec)  a claimed store row: run it, save its outcome (batch, `egym rollout`)

`RolloutOutcome` is the one record of a rollout: the store row is saved from it
(`save_to`), the trainer's sample is derived from it (trainer/rollouts/gym_source.py),
and `egym validate` and `calibrate` read it. It is plain pydantic data so it crosses
process boundaries. Nothing that goes wrong inside the episode raises: the outcome
then carries `error` and no grade, and the store records the rollout as failed.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import Field

from core.errors import ConfigError, EgymError
from core.strict import StrictModel
from core.trajectory import Step, Trajectory
from grader.grade import Grade
from grader.judge import JudgeOptions
from gym.harness.config import HarnessConfig

if TYPE_CHECKING:
    from gym.policies.base import Policy
    from gym.store import Store
    from gym.tasks import Task

StepCallback = Callable[[Step], None]
RolloutFn = Callable[["RolloutSpec"], Awaitable["RolloutOutcome"]]
DEFAULT_ROLLOUT_FN = "gym.rollout:run_rollout"


class RolloutSpec(StrictModel):
    """Everything a worker needs to run one episode; the task is re-read from its folder."""

    run_id: str = Field(description="Run this rollout belongs to (container label).")
    rollout_id: str = Field(description="Store id of the rollout (container label).")
    task: str = Field(description="Task key, `world/task-id`.")
    task_path: str = Field(description="Absolute path of the task folder.")
    sample: int = Field(0, description="Sample index within the run.")
    policy: str = Field(description="Policy name or `module:function` (see gym.policies.make_policy).")
    model: str | None = Field(None, description="Model name for model-backed policies.")
    policy_options: dict[str, Any] = Field(
        default_factory=dict, description="Extra keyword options for the policy."
    )
    harness: HarnessConfig = Field(
        default_factory=HarnessConfig, description="The command's harness settings."
    )
    judge: JudgeOptions = Field(default_factory=JudgeOptions, description="The command's judge settings.")


class RolloutOutcome(StrictModel):
    """The record of one rollout. `grade is None` means the rollout failed (see `error`)."""

    rollout_id: str = Field(description="Container label of the rollout (the store id for batches).")
    task: str = Field(description="Task key, `world/task-id`.")
    sample: int = Field(description="Sample number within its run.")
    trajectory: Trajectory | None = Field(
        None, description="What the policy did; None when it never started."
    )
    grade: Grade | None = Field(None, description="The final state's grade; None when the rollout failed.")
    passed: bool | None = Field(
        None,
        description="Score at or above the pass threshold; None when not known "
        "(no grade, or an incomplete one).",
    )
    seconds: float = Field(0.0, description="The whole rollout, sandbox start and removal included.")
    seconds_play: float | None = Field(None, description="The episode: the policy's turns and the tools.")
    seconds_grade: float | None = Field(None, description="Sealing and grading the final state.")
    error: str | None = Field(None, description="Why the rollout failed (one line), when it did.")

    @property
    def ok(self) -> bool:
        return self.grade is not None

    @classmethod
    def failed(cls, spec: RolloutSpec, exc: BaseException) -> RolloutOutcome:
        """The outcome of a rollout that raised before it could play (or whose worker was lost)."""
        return cls(rollout_id=spec.rollout_id, task=spec.task, sample=spec.sample, error=describe_error(exc))

    def save_to(self, store: Store, row_id: str) -> None:
        """Save as the store's rollout `row_id`: `done` with a grade, `failed` without one."""
        store.record(
            row_id,
            trajectory=self.trajectory,
            grade=self.grade,
            passed=self.passed,
            seconds=self.seconds,
            error=self.error,
        )


def resolve_rollout_fn(ref: str | RolloutFn | None) -> RolloutFn:
    """A rollout function from a `module:function` reference (lazily imported), or itself."""
    if ref is None:
        ref = DEFAULT_ROLLOUT_FN
    if callable(ref):
        return ref
    module_name, _, attr = ref.partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"rollout function '{ref}' cannot be loaded ({exc}): use module:function") from None
    return fn


def describe_error(exc: BaseException) -> str:
    """One line for the store: the type, the message, and where it happened when it is not ours."""
    if isinstance(exc, EgymError):
        return f"{type(exc).__name__}: {exc}"
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" (at {frame.filename}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


async def play_rollout(
    task: Task,
    policy: Policy,
    *,
    run_id: str,
    rollout_id: str,
    sample: int = 0,
    harness: HarnessConfig | None = None,
    judge: JudgeOptions | None = None,
    on_step: StepCallback | None = None,
) -> RolloutOutcome:
    """Sandbox -> harness -> grader for one (task, policy); the sandbox is always removed, nothing raises."""
    from gym.episode import open_episode

    started = time.monotonic()
    outcome = RolloutOutcome(rollout_id=rollout_id, task=task.key, sample=sample)
    try:
        async with open_episode(task, run_id=run_id, rollout_id=rollout_id) as episode:
            playing = time.monotonic()
            outcome.trajectory = await episode.play(policy, harness, on_step=on_step)
            grading = time.monotonic()
            outcome.seconds_play = grading - playing
            outcome.grade = await episode.grade(outcome.trajectory, judge_options=judge)
            outcome.seconds_grade = time.monotonic() - grading
        outcome.passed = passed(outcome.grade, task.pass_threshold)
    except Exception as exc:  # noqa: BLE001 - becomes the rollout's recorded error
        outcome.error = describe_error(exc)
    outcome.seconds = time.monotonic() - started
    return outcome


async def run_rollout(spec: RolloutSpec, *, on_step: StepCallback | None = None) -> RolloutOutcome:
    """The task and the policy named by `spec`, played by `play_rollout`."""
    from gym.policies import make_policy
    from gym.tasks import load_task

    try:
        task = load_task(spec.task_path)
        policy = make_policy(spec.policy, task=task, **_model_option(spec))
    except Exception as exc:  # noqa: BLE001 - becomes the rollout's recorded error
        return RolloutOutcome.failed(spec, exc)
    return await play_rollout(
        task,
        policy,
        run_id=spec.run_id,
        rollout_id=spec.rollout_id,
        sample=spec.sample,
        harness=spec.harness,
        judge=spec.judge,
        on_step=on_step,
    )


async def run_and_save(
    store: Store, row_id: str, spec: RolloutSpec, rollout_fn: RolloutFn = run_rollout
) -> RolloutOutcome:
    """Run a rollout the caller has claimed in the store and save its outcome as row `row_id`.

    A rollout function that raises (an executor that lost its worker) fails this rollout, not its batch.
    """
    try:
        outcome = await rollout_fn(spec)
    except Exception as exc:  # noqa: BLE001 - stored as the rollout's error
        outcome = RolloutOutcome.failed(spec, exc)
    outcome.save_to(store, row_id)
    return outcome


def passed(grade: Grade, threshold: float) -> bool | None:
    """Whether a grade passes; None for an incomplete grade (some items could not be graded)."""
    return None if grade.incomplete else grade.normalized >= threshold


def _model_option(spec: RolloutSpec) -> dict[str, Any]:
    """Policy options, with `--model` passed as `model=`, and a `seed` option made per sample.

    `-o seed=0` makes a batch reproducible; each sample still draws differently, from (seed, sample).
    """
    options = dict(spec.policy_options)
    if spec.model is not None:
        options.setdefault("model", spec.model)
    if isinstance(options.get("seed"), int):
        options["seed"] = options["seed"] * 1_000_003 + spec.sample
    return options
