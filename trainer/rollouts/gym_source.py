"""Rollouts through the gym: the task's sandbox, the harness driving the sampler's policy, the rubric grader.

Each rollout runs through gym.rollout.play_rollout, the path of `egym rollout` and
batches, with one difference: the policy is the trainer's live sampler rather than
one built by name, so every turn carries token ids and logprobs. Its record, a
gym.rollout.RolloutOutcome, is both saved in the run store and turned into the
trainer's `Rollout` (`training_rollout`).

Reward (`rollout.options.reward`): by default the raw normalised score, raw
points / possible points, which goes below 0 when penalties or the damage section
(grader.damage) outweigh what was earned. The floored score (`reward: score`)
gives a policy that wrecks the company the same 0 as one that does nothing, so
GRPO would get no signal against damage; group-relative advantages do not need
rewards in [0, 1]. `damage_weight` adds the damage section again, normalised the
same way, for runs that want destruction to cost more. `call_reward` adds a fixed
bonus to an episode with a tool call that ran without error (a format reward for a
model that does not call tools yet); the step's `call_rate` and `rubric_reward_mean`
keep it apart from the rubric's reward. A rollout whose grade is incomplete
(a check or judge could not run) or whose episode broke (sandbox failure,
stop_reason "error") is marked incomplete: it is left out of its group's
advantages unless `rollout.include_incomplete` is set.

Every rollout, with its trajectory and grade, is kept in the run store (`rollout.options.store`,
default $EGYM_STORE or .egym/runs.db) under a run of kind `train` (eval rollouts under the same
id + `-eval`) with the step that sampled it, so `egym serve` shows what the model did at each step.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import logging
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from core.errors import ConfigError, StoreError
from core.strict import StrictModel
from core.validation import describe_validation_error
from grader.judge import JudgeOptions
from gym.harness.config import HarnessConfig
from trainer.rollouts.trajectory import trajectory_samples
from trainer.samples import Group, Rollout
from trainer.seeding import derive_seed

if TYPE_CHECKING:
    from gym.rollout import RolloutOutcome
    from gym.store import Store

log = logging.getLogger(__name__)
SAMPLES_PER_STEP = 100_000  # a stored rollout's sample number: step * this + its place in the step


class GymOptions(StrictModel):
    """`rollout.options` for the gym source."""

    harness: HarnessConfig = Field(
        default_factory=HarnessConfig, description="Harness settings (max_turns...)."
    )
    run_id: str | None = Field(
        None, description="Container label for this run (default: a fresh id per process)."
    )
    merge_turns: bool = Field(
        True, description="Merge turns whose prompt extends the previous sequence (exact)."
    )
    judge: JudgeOptions = Field(
        default_factory=JudgeOptions, description="Judge settings (allow_same_model, ...)."
    )
    reward: Literal["raw", "score"] = Field(
        "raw",
        description="raw: points / possible, below 0 for damage; score: floored at 0 (the reported score).",
    )
    damage_weight: float = Field(
        0.0, ge=0, le=10, description="Extra weight on the damage section (points lost / possible)."
    )
    call_reward: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Added to the reward of an episode with at least one tool call that ran without error "
        "(a format reward for models that do not call tools yet); logged apart as call_rate.",
    )
    keep_rollouts: bool = Field(
        True, description="Keep every rollout (trajectory, grade, step) in the run store, for the dashboard."
    )
    store: str | None = Field(
        None, description="Run store URL or SQLite path (default: $EGYM_STORE, else .egym/runs.db)."
    )

    def rubric_reward(self, grade: Any) -> float:
        base = grade.raw_normalized if self.reward == "raw" else grade.normalized
        extra = self.damage_weight * grade.damage / grade.possible if grade.possible else 0.0
        return base + extra

    def reward_of(self, grade: Any, trajectory: Any) -> float:
        return self.rubric_reward(grade) + (self.call_reward if trajectory.working_call_turns else 0.0)


class GymRolloutSource:
    def __init__(self, config: Any, tokenizer: Any) -> None:
        try:
            self.options = GymOptions.model_validate(config.rollout.options)
        except ValidationError as exc:
            raise ConfigError(
                describe_validation_error(exc, where="rollout.options", model=GymOptions)
            ) from None
        self.config = config
        self.run_id = self.options.run_id or f"train-{uuid.uuid4().hex[:8]}"  # the containers' label
        self._store: Any = None
        self._placed: dict[tuple[str, int], int] = {}  # rollouts stored so far per (phase, step)

    @property
    def store_run(self) -> str:
        """The run store's run for this training run: one per output folder and model."""
        out = Path(self.config.output_dir).resolve()
        model = self.config.model.path or self.config.model.builder or ""
        return f"train-{out.name}-{hashlib.sha256(f'{out}|{model}'.encode()).hexdigest()[:6]}"

    def _keep(self, phase: str) -> tuple[Any, str] | None:
        """The store and the run that keep this phase's rollouts (made on first use), or None."""
        if not self.options.keep_rollouts:
            return None
        from gym.store import Store

        if self._store is None:
            self._store = Store(self.options.store)
        run = self.store_run + ("" if phase == "train" else f"-{phase}")
        model = self.config.model.path or self.config.model.builder
        self._store.create_run(
            run, policy="grpo", model=model, kind="train", config={"output_dir": self.config.output_dir}
        )
        return self._store, run

    def tasks(self, split: str) -> list[Any]:
        from gym.task_refs import resolve

        patterns = self.config.tasks.include
        found = resolve(self.config.tasks.refs())
        return [
            t
            for t in found
            if t.split == split and (not patterns or any(fnmatch.fnmatch(t.key, p) for p in patterns))
        ]

    def collect(
        self,
        sampler: Any,
        tasks: Sequence[Any],
        *,
        group_size: int,
        seeds: Sequence[int],
        step: int = 0,
        phase: str = "train",
        on_rollout: Callable[[Rollout], None] | None = None,
    ) -> list[Group]:
        keep = self._keep(phase)
        first = self._placed.get((phase, step), 0)  # a step may collect more than once (resampling)
        self._placed[(phase, step)] = first + len(tasks) * group_size
        return asyncio.run(
            self._collect(sampler, list(tasks), group_size, list(seeds), step, first, keep, on_rollout)
        )

    async def _collect(
        self,
        sampler: Any,
        tasks: list[Any],
        group_size: int,
        seeds: list[int],
        step: int,
        first: int,
        keep: tuple[Any, str] | None,
        on_rollout: Callable[[Rollout], None] | None,
    ) -> list[Group]:
        limit = asyncio.Semaphore(self.config.rollout.concurrency)

        async def one(task: Any, seed: int, place: int) -> Rollout:
            async with limit:
                outcome = await self.rollout(
                    sampler,
                    task,
                    derive_seed(seed, place % group_size),
                    sample=step * SAMPLES_PER_STEP + first + place,
                )
            rollout = training_rollout(outcome, self.options)
            if keep is not None:
                try:
                    await asyncio.to_thread(_keep_outcome, *keep, outcome, step)
                except StoreError as exc:  # the dashboard loses a rollout; the training run goes on
                    log.warning("rollout of %s not kept in the run store: %s", task.key, exc)
            if on_rollout is not None:
                on_rollout(rollout)
            return rollout

        jobs = [
            [one(task, seed, g * group_size + i) for i in range(group_size)]
            for g, (task, seed) in enumerate(zip(tasks, seeds, strict=True))
        ]
        results = await asyncio.gather(*(asyncio.gather(*group) for group in jobs))
        return [Group(task=task.key, rollouts=list(r)) for task, r in zip(tasks, results, strict=True)]

    async def rollout(self, sampler: Any, task: Any, seed: int, *, sample: int = 0) -> RolloutOutcome:
        """One episode of the sampler's policy in a fresh sandbox, through the gym's one rollout path.

        Never raises for a broken episode: its outcome has an error and no grade.
        """
        from gym.rollout import play_rollout

        return await play_rollout(
            task,
            sampler.chat_policy(self.config.sampling, seed),
            run_id=self.run_id,
            rollout_id=f"{task.key.replace('/', '-')}-{seed:x}",
            sample=sample,
            harness=self.options.harness,
            judge=self.options.judge,
        )


def training_rollout(outcome: RolloutOutcome, options: GymOptions) -> Rollout:
    """The trainer's view of a rollout record: its token sequences and reward, with what the step logs.

    A rollout that failed (no grade), whose grade is incomplete or whose episode broke is incomplete.
    """
    grade, trajectory = outcome.grade, outcome.trajectory
    if grade is None or trajectory is None:
        return Rollout(samples=[], reward=0.0, incomplete=True, info={"error": outcome.error})
    turns = [step.turn for step in trajectory.steps]
    cached = [turn.cached_tokens for turn in turns if turn.cached_tokens is not None]
    return Rollout(
        samples=trajectory_samples(trajectory, merge=options.merge_turns),
        reward=options.reward_of(grade, trajectory),
        passed=outcome.passed,
        incomplete=grade.incomplete or trajectory.stop_reason == "error",
        info={
            "grade": str(grade),
            "raw": grade.raw,
            "damage": grade.damage,
            "stop_reason": trajectory.stop_reason,
            "error": trajectory.error,
            "turns": len(trajectory.steps),
            "rubric_reward": options.rubric_reward(grade),
            "working_call_turns": trajectory.working_call_turns,
            "completion_tokens": sum(len(turn.token_ids or []) for turn in turns),
            "prompt_tokens": sum(turn.prompt_tokens or 0 for turn in turns),
            "cached_tokens": sum(cached) if cached else None,  # None: the policy's engine does not say
            "seconds_play": outcome.seconds_play,
            "seconds_grade": outcome.seconds_grade,
        },
    )


def _keep_outcome(store: Store, run: str, outcome: RolloutOutcome, step: int) -> None:
    """Save a training rollout in the run store under its run and the step that sampled it."""
    (row,) = store.add_rollouts(run, [(outcome.task, outcome.sample)], step=step)
    outcome.save_to(store, row.id)
