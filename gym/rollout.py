"""One rollout: start the task's sandbox, run the harness with a policy, grade the final state.

`run_rollout(spec)` is the unit every executor runs (asyncio on this machine,
a Ray task on a cluster node). It takes and returns plain pydantic models so
it crosses process boundaries, and it never raises for something that went
wrong inside the episode: the outcome then carries `error` and no grade, and
the batch runner records the rollout as failed.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.errors import ConfigError, EgymError
from core.trajectory import Step, Trajectory
from grader.grade import Grade
from grader.judge import JudgeOptions
from gym.harness.config import HarnessConfig

StepCallback = Callable[[Step], None]
RolloutFn = Callable[["RolloutSpec"], Awaitable["RolloutOutcome"]]
DEFAULT_ROLLOUT_FN = "gym.rollout:run_rollout"


class RolloutSpec(BaseModel):
    """Everything a worker needs to run one episode; the task is re-read from its folder."""

    model_config = ConfigDict(extra="forbid")

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


class RolloutOutcome(BaseModel):
    """What came back from one episode. `grade is None` means the rollout failed (see `error`)."""

    model_config = ConfigDict(extra="forbid")

    rollout_id: str
    task: str
    sample: int
    trajectory: Trajectory | None = None
    grade: Grade | None = None
    passed: bool | None = Field(
        None,
        description="Score at or above the pass threshold; None when not known "
        "(no grade, or an incomplete one).",
    )
    seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.grade is not None


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


async def run_rollout(spec: RolloutSpec, *, on_step: StepCallback | None = None) -> RolloutOutcome:
    """Sandbox -> harness -> grader for one (task, sample); the sandbox is always removed."""
    from gym.episode import open_episode
    from gym.policies import make_policy
    from gym.tasks import load_task

    started = time.monotonic()
    outcome = RolloutOutcome(rollout_id=spec.rollout_id, task=spec.task, sample=spec.sample)
    try:
        task = load_task(spec.task_path)
        policy = make_policy(spec.policy, task=task, **_model_option(spec))
        async with open_episode(task, run_id=spec.run_id, rollout_id=spec.rollout_id) as episode:
            outcome.trajectory = await episode.play(policy, spec.harness, on_step=on_step)
            outcome.grade = await episode.grade(outcome.trajectory, judge_options=spec.judge)
        outcome.passed = passed(outcome.grade, task.pass_threshold)
    except Exception as exc:  # noqa: BLE001 - becomes the rollout's recorded error
        outcome.error = describe_error(exc)
    outcome.seconds = time.monotonic() - started
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
