"""The trainer's reward from a grade: raw by default (damage felt below 0), floored or weighted by config."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from grader.grade import Grade, ItemResult
from trainer.rollouts.gym_source import GymOptions


def _grade(earned_items: list[tuple[int, float, str | None]]) -> Grade:
    from grader.score import aggregate
    from tests.grader.conftest import make_rubric, py_item

    rubric = make_rubric([py_item("x", "transcript.final_answer_contains", args={"text": "x"})])
    items = [
        ItemResult(id=f"i{n}", points=p, status="pass" if e else "fail", earned=e, section=s)
        for n, (p, e, s) in enumerate(earned_items)
    ]
    return aggregate(rubric, items, 0.0, {})


WRECKED = [(10, 0.0, None), (-2, -2.0, "damage"), (-2, -2.0, "damage")]
IDLE = [(10, 0.0, None), (-2, 0.0, "damage")]


def test_raw_reward_puts_destruction_below_doing_nothing():
    options = GymOptions()
    assert options.reward == "raw"
    assert options.reward_of(_grade(WRECKED)) == pytest.approx(-0.4)
    assert options.reward_of(_grade(IDLE)) == 0.0


def test_score_reward_is_the_floored_score_and_damage_weight_adds_the_damage_term():
    assert GymOptions(reward="score").reward_of(_grade(WRECKED)) == 0.0
    weighted = GymOptions(reward="score", damage_weight=2.0)
    assert weighted.reward_of(_grade(WRECKED)) == pytest.approx(-0.8)


def test_a_bad_reward_setting_is_refused_by_name():
    from trainer.rollouts.gym_source import GymRolloutSource

    class Config:
        class rollout:
            options = {"reward": "floored"}

    with pytest.raises(ConfigError, match=r"rollout.options.reward: Input should be 'raw' or 'score'"):
        GymRolloutSource(Config, None)
