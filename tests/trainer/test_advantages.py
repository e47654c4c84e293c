"""Group advantages and the dropping of groups that carry no signal."""

import math

import pytest

from trainer.advantages import build_items, group_advantages, has_signal
from trainer.samples import Group, Rollout, Sample


def _rollout(reward: float, *, incomplete: bool = False, turns: int = 1) -> Rollout:
    samples = [Sample.from_turn([1, 2], [3, 4], [-0.5, -0.5]) for _ in range(turns)]
    return Rollout(samples=samples, reward=reward, passed=reward >= 0.8, incomplete=incomplete)


def test_group_advantages_hand_computed():
    # mean 0.5, population std 0.5
    adv = group_advantages([1.0, 0.0, 0.0, 1.0], eps=1e-6)
    a = 0.5 / (0.5 + 1e-6)
    assert adv == pytest.approx([a, -a, -a, a])
    assert sum(adv) == pytest.approx(0.0)


def test_group_advantages_uneven_rewards():
    rewards = [0.2, 0.4, 0.9]
    mean = 0.5
    std = math.sqrt(((0.3) ** 2 + (0.1) ** 2 + (0.4) ** 2) / 3)
    assert group_advantages(rewards, eps=0.01) == pytest.approx([(r - mean) / (std + 0.01) for r in rewards])


def test_unscaled_advantages_only_centre():
    assert group_advantages([0.2, 0.6], scale=False) == pytest.approx([-0.2, 0.2])


def test_has_signal():
    assert not has_signal([0.5, 0.5, 0.5])
    assert not has_signal([1.0])
    assert has_signal([0.5, 0.5, 0.6])


def test_zero_variance_groups_dropped_and_counted():
    groups = [
        Group("a", [_rollout(1.0), _rollout(1.0)]),  # all pass: no signal
        Group("b", [_rollout(0.0), _rollout(0.0), _rollout(0.0)]),  # all fail: no signal
        Group("c", [_rollout(1.0), _rollout(0.0, turns=2)]),
    ]
    items, stats = build_items(groups)
    assert stats.groups == 3 and stats.groups_kept == 1 and stats.groups_zero_variance == 2
    # only group c's samples: 1 + 2 turns, the two turns of one trajectory share its advantage and id
    assert len(items) == 3
    assert items[0].advantage > 0 and items[1].advantage < 0 and items[1].advantage == items[2].advantage
    assert items[1].trajectory == items[2].trajectory != items[0].trajectory
    # reward statistics still describe every rollout, kept or not
    assert stats.rollouts == 7 and stats.reward_mean == pytest.approx(3 / 7)
    assert stats.pass_rate == pytest.approx(3 / 7)


def test_incomplete_grades_left_out_unless_configured():
    group = Group("a", [_rollout(1.0), _rollout(0.0, incomplete=True), _rollout(0.5)])
    items, stats = build_items([group])
    assert stats.rollouts_incomplete == 1 and len(items) == 2
    assert stats.reward_mean == pytest.approx(0.75)
    items, _ = build_items([group], include_incomplete=True)
    assert len(items) == 3


def test_group_with_one_usable_rollout_is_too_small():
    group = Group("a", [_rollout(1.0), _rollout(0.0, incomplete=True)])
    items, stats = build_items([group])
    assert items == [] and stats.groups_too_small == 1 and stats.groups_kept == 0


def test_the_format_reward_is_reported_apart_from_the_rubric_reward():
    def rollout(rubric: float, bonus: float, calls: int) -> Rollout:
        info = {"rubric_reward": rubric, "working_call_turns": calls}
        return Rollout(samples=[Sample.from_turn([1], [2], [-0.1])], reward=rubric + bonus, info=info)

    group = Group(
        "a", [rollout(0.0, 0.1, 1), rollout(0.0, 0.0, 0), rollout(1.0, 0.1, 2), rollout(0.0, 0.1, 1)]
    )
    _, stats = build_items([group])
    assert stats.reward_mean == pytest.approx(1.3 / 4)
    assert stats.rubric_reward_mean == pytest.approx(0.25) and stats.call_rate == pytest.approx(0.75)
    _, no_info = build_items([Group("b", [_rollout(1.0), _rollout(0.0)])])
    assert no_info.call_rate is None and no_info.rubric_reward_mean == pytest.approx(0.5)
