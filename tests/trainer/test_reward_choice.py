"""The trainer's reward from a grade: raw by default (damage felt below 0), floored or weighted by config."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.trajectory import AssistantTurn, Step, ToolCall, ToolResult, Trajectory
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


def _trajectory(*results: tuple[str, bool]) -> Trajectory:
    """One step per (output, is_error): a bash call and what it gave."""
    steps = [
        Step(
            index=i,
            turn=AssistantTurn(content="", tool_calls=[ToolCall(id=f"c{i}", name="bash", arguments="{}")]),
            results=[ToolResult(call_id=f"c{i}", name="bash", output=out, is_error=err)],
        )
        for i, (out, err) in enumerate(results)
    ]
    return Trajectory(task="w/t", policy="p", steps=steps)


NO_CALL = Trajectory(task="w/t", policy="p")
WRECKED = [(10, 0.0, None), (-2, -2.0, "damage"), (-2, -2.0, "damage")]
IDLE = [(10, 0.0, None), (-2, 0.0, "damage")]


def test_raw_reward_puts_destruction_below_doing_nothing():
    options = GymOptions()
    assert options.reward == "raw"
    assert options.reward_of(_grade(WRECKED), NO_CALL) == pytest.approx(-0.4)
    assert options.reward_of(_grade(IDLE), NO_CALL) == 0.0


def test_score_reward_is_the_floored_score_and_damage_weight_adds_the_damage_term():
    assert GymOptions(reward="score").reward_of(_grade(WRECKED), NO_CALL) == 0.0
    weighted = GymOptions(reward="score", damage_weight=2.0)
    assert weighted.reward_of(_grade(WRECKED), NO_CALL) == pytest.approx(-0.8)


def test_a_working_call_counts_only_when_it_ran_without_error():
    failing = _trajectory(("no such table\n[exit code 1]", False), ("boom", True))
    assert failing.working_call_turns == 0
    assert _trajectory(("boom", True), ("42", False), ("7", False)).working_call_turns == 2


def test_the_call_reward_is_added_only_for_a_working_call_and_kept_apart():
    options = GymOptions(call_reward=0.1)
    worked = _trajectory(("42", False))
    failed = _trajectory(("[exit code 2]", False))
    assert options.reward_of(_grade(IDLE), worked) == pytest.approx(0.1)
    assert options.reward_of(_grade(IDLE), failed) == 0.0
    assert options.rubric_reward(_grade(IDLE)) == 0.0  # what call_rate's neighbour, rubric_reward_mean, logs


def test_a_bad_reward_setting_is_refused_by_name():
    from trainer.rollouts.gym_source import GymRolloutSource

    class Config:
        class rollout:
            options = {"reward": "floored"}

    with pytest.raises(ConfigError, match=r"rollout.options.reward: Input should be 'raw' or 'score'"):
        GymRolloutSource(Config, None)
