"""Group-relative advantages (GRPO) and the filtering of groups that carry no signal.

advantage_i = (r_i - mean(r)) / (std(r) + eps) within the G rollouts of one
task. std is the population std (ddof=0). A group whose rewards are all equal
has every advantage 0: it costs compute and adds nothing, so it is dropped
and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from trainer.samples import Group, Rollout, TrainItem

EQUAL_TOL = 1e-9


def group_advantages(rewards: Sequence[float], eps: float = 1e-6, scale: bool = True) -> list[float]:
    """(r - mean) / (std + eps), or only r - mean when `scale` is False (Dr. GRPO)."""
    if not rewards:
        return []
    mean = sum(rewards) / len(rewards)
    centred = [r - mean for r in rewards]
    if not scale:
        return centred
    std = math.sqrt(sum(c * c for c in centred) / len(rewards))
    return [c / (std + eps) for c in centred]


def has_signal(rewards: Sequence[float]) -> bool:
    """False when every reward is equal (all advantages would be zero)."""
    return len(rewards) >= 2 and max(rewards) - min(rewards) > EQUAL_TOL


@dataclass
class BatchStats:
    """What happened to the groups of one step; logged with the step's metrics."""

    groups: int = 0
    groups_kept: int = 0
    groups_zero_variance: int = 0
    groups_too_small: int = 0
    rollouts: int = 0
    rollouts_incomplete: int = 0
    reward_mean: float = 0.0
    reward_std: float = 0.0
    rubric_reward_mean: float = 0.0  # without a format reward (rollout.options.call_reward)
    call_rate: float | None = None  # share of rollouts with a tool call that ran without error
    pass_rate: float | None = None
    adv_mean: float = 0.0
    adv_std: float = 0.0
    adv_abs_max: float = 0.0


def _usable(group: Group, include_incomplete: bool) -> list[Rollout]:
    return [r for r in group.rollouts if include_incomplete or not r.incomplete]


def group_has_signal(group: Group, include_incomplete: bool = False) -> bool:
    """The group would be kept by build_items: two or more usable rollouts whose rewards differ."""
    return has_signal([r.reward for r in _usable(group, include_incomplete)])


def build_items(
    groups: Sequence[Group], *, eps: float = 1e-6, scale: bool = True, include_incomplete: bool = False
) -> tuple[list[TrainItem], BatchStats]:
    """Train items for every kept group, each trajectory numbered, plus the step's group statistics."""
    stats = BatchStats(groups=len(groups))
    items: list[TrainItem] = []
    all_rewards: list[float] = []
    passes: list[bool] = []
    rubric: list[float] = []
    calls: list[bool] = []
    advantages: list[float] = []
    trajectory = 0
    for group in groups:
        stats.rollouts += len(group.rollouts)
        usable = _usable(group, include_incomplete)
        stats.rollouts_incomplete += sum(r.incomplete for r in group.rollouts)
        rewards = [r.reward for r in usable]
        all_rewards += rewards
        passes += [r.passed for r in usable if r.passed is not None]
        rubric += [r.info.get("rubric_reward", r.reward) for r in usable]
        calls += [r.info["working_call_turns"] > 0 for r in usable if "working_call_turns" in r.info]
        if len(usable) < 2:
            stats.groups_too_small += 1
            continue
        if not has_signal(rewards):
            stats.groups_zero_variance += 1
            continue
        stats.groups_kept += 1
        for rollout, adv in zip(usable, group_advantages(rewards, eps, scale), strict=True):
            advantages.append(adv)
            items += [TrainItem(sample=s, advantage=adv, trajectory=trajectory) for s in rollout.samples]
            trajectory += 1
    stats.reward_mean, stats.reward_std = _mean_std(all_rewards)
    stats.pass_rate = sum(passes) / len(passes) if passes else None
    stats.rubric_reward_mean = _mean_std(rubric)[0]
    stats.call_rate = sum(calls) / len(calls) if calls else None
    stats.adv_mean, stats.adv_std = _mean_std(advantages)
    stats.adv_abs_max = max((abs(a) for a in advantages), default=0.0)
    return items, stats


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
