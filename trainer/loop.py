"""The GRPO loop: pick tasks, roll out groups, compute advantages, update, sync, log, checkpoint.

The loop only talks to two narrow roles, so the same code drives one process
or a Ray cluster:
- rollouts: `collect(tasks, group_size, seeds) -> groups` and `sync(update)`;
- learner:  `update(items) -> stats`, `weight_update(version)`, `save(...)`, `load(path)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from trainer.advantages import BatchStats, build_items, group_has_signal
from trainer.checkpoint import find_resume
from trainer.config import TrainConfig
from trainer.curriculum import Curriculum, band_moves
from trainer.metrics import MetricsLog
from trainer.model import model_key
from trainer.samplers.base import WeightUpdate
from trainer.samples import Group, Rollout, TrainItem
from trainer.seeding import derive_seed


class Rollouts(Protocol):
    def collect(
        self,
        tasks: list[Any],
        group_size: int,
        seeds: list[int],
        *,
        step: int = 0,
        phase: str = "train",
        on_rollout: Callable[[Rollout], None] | None = None,
    ) -> list[Group]: ...

    def sync(self, update: WeightUpdate) -> None: ...


class LearnerRole(Protocol):
    def update(self, items: list[TrainItem]) -> dict[str, float]: ...

    def weight_update(self, version: int) -> WeightUpdate: ...

    def save(self, step: int, state: dict[str, Any]) -> Path: ...

    def load(self, path: Path) -> dict[str, Any]: ...


@dataclass
class StepProgress:
    """Where a step is, for a live display: `egym train` redraws its progress line from it."""

    step: int
    phase: str  # "rollouts", "resample N" (dynamic sampling), "update" or "eval"
    total: int  # rollouts planned in this phase
    done: int = 0
    reward_sum: float = 0.0
    tokens: int = 0  # tokens the policy wrote in the finished rollouts
    started: float = field(default_factory=time.perf_counter)

    def add(self, rollout: Rollout) -> None:
        self.done += 1
        self.reward_sum += rollout.reward
        self.tokens += sum(sample.model_tokens for sample in rollout.samples)

    @property
    def reward_mean(self) -> float | None:
        return self.reward_sum / self.done if self.done else None

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / max(time.perf_counter() - self.started, 1e-9)


class GRPOTrainer:
    def __init__(
        self,
        config: TrainConfig,
        *,
        rollouts: Rollouts,
        learner: LearnerRole,
        train_tasks: list[Any],
        eval_tasks: list[Any] | None = None,
    ) -> None:
        self.config = config
        self.rollouts = rollouts
        self.learner = learner
        curriculum = config.tasks.curriculum
        self.curriculum = Curriculum(
            train_tasks,
            curriculum.band_weights,
            config.seed,
            model=curriculum.bands_of or model_key(config.model),
            promote_at=curriculum.promote_at,
            window=curriculum.window,
            min_observed=curriculum.min_observed,
        )
        self.eval_tasks = eval_tasks or []
        out = Path(config.output_dir)
        self.metrics = MetricsLog(out, config.logging, config.model_dump())
        self.step_done = 0
        self.on_progress: Callable[[StepProgress], None] | None = None

    # -- run ------------------------------------------------------------

    def run(
        self,
        on_step: Callable[[dict[str, Any]], None] | None = None,
        on_progress: Callable[[StepProgress], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Train to `config.steps` (resuming if a checkpoint is found); returns every step's metrics.

        `on_step` sees each step's record as it is logged (the CLI prints it); `on_progress`
        sees the step's progress after each finished rollout and when the update starts.
        """
        self.on_progress = on_progress
        self._write_config()
        self.resume()
        interval = self.config.checkpoint.interval
        try:
            while self.step_done < self.config.steps:
                step = self.step_done + 1
                record = self.step(step)
                if self.config.eval.interval and step % self.config.eval.interval == 0:
                    record.update(self.evaluate(step))
                self.metrics.log(record)
                if on_step is not None:
                    on_step(record)
                self.step_done = step
                if (interval and step % interval == 0) or step == self.config.steps:
                    self.save()
        finally:
            self.metrics.close()
        return self.metrics.records()

    def resume(self) -> None:
        path = find_resume(self.config.checkpoint_dir, self.config.checkpoint.resume)
        if path is None:
            self.metrics.start(after_step=0)  # a fresh run: no stale records from an earlier one
            return
        state = self.learner.load(path)
        self.curriculum.load_state_dict(state["curriculum"])
        self.step_done = state["step"]
        self.metrics.start(after_step=self.step_done)
        # The samplers must generate with the restored weights.
        self.rollouts.sync(self.learner.weight_update(self.step_done))

    def save(self) -> Path:
        return self.learner.save(self.step_done, {"curriculum": self.curriculum.state_dict()})

    # -- one step -------------------------------------------------------

    def step(self, step: int) -> dict[str, Any]:
        started = time.perf_counter()
        bands_before = self.curriculum.level_bands()
        tasks = self.curriculum.sample(self.config.rollout.tasks_per_step)
        seeds = [derive_seed(self.config.seed, "train", step, i) for i in range(len(tasks))]
        groups = self._collect_train(step, tasks, seeds, "rollouts")
        # Dynamic sampling: groups without signal are replaced by fresh ones (they stay in the
        # step's statistics, and build_items drops them from the update as always).
        include = self.config.rollout.include_incomplete
        flat = [g for g in groups if not group_has_signal(g, include)]
        resampled = 0
        for round_ in range(1, self.config.rollout.resample_rounds + 1):
            if not flat:
                break
            tasks = self.curriculum.sample(len(flat))
            seeds = [derive_seed(self.config.seed, "resample", step, round_, i) for i in range(len(tasks))]
            fresh = self._collect_train(step, tasks, seeds, f"resample {round_}")
            groups, resampled = groups + fresh, resampled + len(fresh)
            flat = [g for g in fresh if not group_has_signal(g, include)]
        t_rollout = time.perf_counter() - started
        loss = self.config.loss
        items, stats = build_items(
            groups,
            eps=loss.adv_eps,
            scale=loss.scale_advantages,
            include_incomplete=self.config.rollout.include_incomplete,
        )
        update: dict[str, Any] = {}
        t_sync = 0.0
        if items:
            self._tracker(step, "update", len(items))
            update = self.learner.update(items)
            sync_started = time.perf_counter()
            self.rollouts.sync(self.learner.weight_update(step))
            t_sync = time.perf_counter() - sync_started
        elapsed = time.perf_counter() - started
        record = _record(step, stats, update, t_rollout=t_rollout, t_sync=t_sync, elapsed=elapsed)
        return (
            record
            | _rollout_times(groups)
            | _rollout_tokens(groups)
            | _prefix_cache(groups)
            | {"groups_resampled": resampled}
            | band_moves(bands_before, self.curriculum.level_bands())
        )

    def _collect_train(self, step: int, tasks: list[Any], seeds: list[int], phase: str) -> list[Group]:
        """One group per task, shown as `phase` of the step; the curriculum sees their pass rates."""
        group_size = self.config.rollout.group_size
        groups = self.rollouts.collect(
            tasks,
            group_size,
            seeds,
            step=step,
            phase="train",
            on_rollout=self._tracker(step, phase, len(tasks) * group_size),
        )
        for group in groups:
            self.curriculum.observe(group.task, [r.passed for r in group.rollouts])
        return groups

    def evaluate(self, step: int) -> dict[str, Any]:
        """Mean reward and pass rate on the eval split, without updating."""
        tasks = (
            self.eval_tasks[: self.config.eval.max_tasks] if self.config.eval.max_tasks else self.eval_tasks
        )
        seeds = [derive_seed(self.config.seed, "eval", step, i) for i in range(len(tasks))]
        group_size = self.config.eval.group_size
        groups = self.rollouts.collect(
            tasks,
            group_size,
            seeds,
            step=step,
            phase="eval",
            on_rollout=self._tracker(step, "eval", len(tasks) * group_size),
        )
        _, stats = build_items(groups, include_incomplete=self.config.rollout.include_incomplete)
        return {
            "eval_reward_mean": stats.reward_mean,
            "eval_pass_rate": stats.pass_rate,
            "eval_rollouts": stats.rollouts,
        }

    def _tracker(self, step: int, phase: str, total: int) -> Callable[[Rollout], None] | None:
        """A new phase of the step: shown now, then after each rollout it finishes."""
        show = self.on_progress
        if show is None:
            return None
        progress = StepProgress(step, phase, total)
        show(progress)

        def finished(rollout: Rollout) -> None:
            progress.add(rollout)
            show(progress)

        return finished

    def _write_config(self) -> None:
        out = Path(self.config.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.yaml").write_text(yaml.safe_dump(self.config.model_dump(mode="json"), sort_keys=False))


def _rollout_times(groups: list[Group]) -> dict[str, float | None]:
    """Mean seconds per rollout playing (policy and tools) and grading, where the source timed them."""
    infos = [r.info for g in groups for r in g.rollouts]

    def mean(key: str) -> float | None:
        values = [i[key] for i in infos if i.get(key) is not None]
        return sum(values) / len(values) if values else None

    return {"rollout_play_s": mean("seconds_play"), "rollout_grade_s": mean("seconds_grade")}


def _rollout_tokens(groups: list[Group]) -> dict[str, int]:
    """Tokens of every rollout of the step (groups without signal too): those the policy generated
    and those it was given (prompts, tool results, chat-template glue)."""
    samples = [s for g in groups for r in g.rollouts for s in r.samples]
    generated = sum(s.model_tokens for s in samples)
    return {
        "tokens_prompt": sum(len(s.token_ids) for s in samples) - generated,
        "tokens_generated": generated,
    }


def _prefix_cache(groups: list[Group]) -> dict[str, float | None]:
    """Share of the step's prompt tokens the engine read from its prefix cache (where the sampler says)."""
    infos = [r.info for g in groups for r in g.rollouts if r.info.get("cached_tokens") is not None]
    prompt = sum(i["prompt_tokens"] for i in infos)
    return {"prefix_cache_hit_rate": sum(i["cached_tokens"] for i in infos) / prompt if prompt else None}


def _record(
    step: int, stats: BatchStats, update: dict[str, Any], *, t_rollout: float, t_sync: float, elapsed: float
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "step": step,
        "reward_mean": stats.reward_mean,
        "reward_std": stats.reward_std,
        "pass_rate": stats.pass_rate,
        "rubric_reward_mean": stats.rubric_reward_mean,
        "call_rate": stats.call_rate,
        "groups": stats.groups,
        "groups_kept": stats.groups_kept,
        "groups_zero_variance": stats.groups_zero_variance,
        "groups_too_small": stats.groups_too_small,
        "zero_variance_share": stats.groups_zero_variance / stats.groups if stats.groups else None,
        "rollouts": stats.rollouts,
        "rollouts_incomplete": stats.rollouts_incomplete,
        "adv_mean": stats.adv_mean,
        "adv_std": stats.adv_std,
        "adv_abs_max": stats.adv_abs_max,
    }
    for key in (
        "loss",
        "grad_norm",
        "lr",
        "clip_frac",
        "ratio_mean",
        "kl_sampler",
        "kl_ref",
        "entropy",
        "tokens_model",
        "tokens_total",
    ):
        record[key] = update.get(key)
    time_update = update.get("time_update", 0.0)
    record |= {
        "time_rollout": t_rollout,
        "time_update": time_update,
        "time_sync": t_sync,
        "time_step": elapsed,
        "update_tokens_per_s": (update.get("tokens_total") or 0.0) / time_update if time_update else None,
    }
    return record
