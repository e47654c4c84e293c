"""Everything in one process: a sampler that shares the model (`hf`) generates with the learner's own.

`build_trainer` is the entry point used by `egym train`; with `ray.enabled`
it hands over to trainer.distributed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from trainer.checkpoint import load_checkpoint, save_checkpoint
from trainer.config import TrainConfig
from trainer.learner import Learner, combine_stats
from trainer.loop import GRPOTrainer
from trainer.model import load_policy
from trainer.rollouts.base import RolloutSource, build_source
from trainer.samplers.base import Sampler, WeightUpdate, build_sampler
from trainer.samples import Group, TrainItem
from trainer.seeding import seed_everything


class LocalLearner:
    def __init__(self, config: TrainConfig, model: Any, tokenizer: Any) -> None:
        self.config = config
        self.learner = Learner(config, model, tokenizer)

    def update(self, items: list[TrainItem]) -> dict[str, float]:
        return combine_stats([self.learner.update(items)])

    def weight_update(self, version: int) -> WeightUpdate:
        return self.learner.weight_update(version)

    def save(self, step: int, state: dict[str, Any]) -> Path:
        return save_checkpoint(
            self.config.checkpoint_dir,
            step,
            model=self.learner.model,
            tokenizer=self.learner.tokenizer,
            learner_state=self.learner.state_dict(),
            state={**state, "config": self.config.model_dump(mode="json")},
            keep=self.config.checkpoint.keep,
        )

    def load(self, path: Path) -> dict[str, Any]:
        learner_state, state = load_checkpoint(path, self.learner.model)
        self.learner.load_state_dict(learner_state)
        return state


class LocalRollouts:
    def __init__(self, source: RolloutSource, sampler: Sampler) -> None:
        self.source = source
        self.sampler = sampler

    def collect(
        self, tasks: Sequence[Any], group_size: int, seeds: Sequence[int], **what: Any
    ) -> list[Group]:
        return self.source.collect(self.sampler, tasks, group_size=group_size, seeds=seeds, **what)

    def sync(self, update: WeightUpdate) -> None:
        self.sampler.sync(update)


def build_trainer(config: TrainConfig) -> GRPOTrainer:
    """A ready-to-run trainer for `config` (local, or on Ray when `ray.enabled`)."""
    if config.ray.enabled:
        from trainer.distributed.driver import build_ray_trainer

        return build_ray_trainer(config)
    seed_everything(config.seed)
    model, tokenizer = load_policy(config.model, config.seed)
    source = build_source(config, tokenizer)
    train_tasks, eval_tasks = split_tasks(source, config)
    sampler = build_sampler(config, tokenizer, model)
    return GRPOTrainer(
        config,
        rollouts=LocalRollouts(source, sampler),
        learner=LocalLearner(config, model, tokenizer),
        train_tasks=train_tasks,
        eval_tasks=eval_tasks,
    )


def split_tasks(source: RolloutSource, config: TrainConfig) -> tuple[list[Any], list[Any]]:
    """Training tasks (tasks.split) and, when evaluation is on, eval tasks (eval.split)."""
    train = source.tasks(config.tasks.split)
    if not train:
        raise ConfigError(f"tasks: no '{config.tasks.split}' tasks under {', '.join(config.tasks.refs())}")
    evals = source.tasks(config.eval.split) if config.eval.interval else []
    if config.eval.interval and not evals:
        raise ConfigError(
            f"eval.interval is {config.eval.interval} but there are no '{config.eval.split}' tasks; "
            "set eval.interval=0 or add tasks with that split"
        )
    return train, evals
