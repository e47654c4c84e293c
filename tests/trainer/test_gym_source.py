"""The gym source's rollouts: the run store's row and the trainer's sample come from one rollout record."""

from __future__ import annotations

import pytest

from core.trajectory import AssistantTurn, Step, ToolCall, ToolResult, Trajectory
from grader.grade import Grade, ItemResult
from gym.rollout import RolloutOutcome
from gym.store import Store
from trainer.rollouts.gym_source import SAMPLES_PER_STEP, GymOptions, _keep_outcome, training_rollout

TASK = "w/t"


def grade(*statuses: str) -> Grade:
    items = [
        ItemResult(id=f"i{n}", points=2, status=status, earned=2.0 if status == "pass" else 0.0)
        for n, status in enumerate(statuses)
    ]
    earned = sum(i.earned for i in items)
    possible = 2 * len(items)
    return Grade(
        task=TASK,
        earned=earned,
        raw_earned=earned,
        possible=possible,
        normalized=earned / possible,
        incomplete="error" in statuses,
        items=items,
    )


def trajectory() -> Trajectory:
    """Two turns of a sampled policy: a bash call, then the answer; the second prompt extends the first."""
    call = AssistantTurn(
        tool_calls=[ToolCall(id="c0", name="bash", arguments="{}")],
        prompt_token_ids=[1, 2, 3],
        token_ids=[10, 11],
        logprobs=[-0.1, -0.2],
    )
    answer = AssistantTurn(
        content="done", prompt_token_ids=[1, 2, 3, 10, 11, 20], token_ids=[12], logprobs=[-0.3]
    )
    steps = [
        Step(index=0, turn=call, results=[ToolResult(call_id="c0", name="bash", output="42")]),
        Step(index=1, turn=answer),
    ]
    return Trajectory(task=TASK, policy="hf", stop_reason="answered", final_answer="done", steps=steps)


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "runs.db"))
    s.create_run("train-x", policy="grpo", kind="train")
    yield s
    s.close()


def keep_and_train(store: Store, outcome: RolloutOutcome, step: int = 3):
    """What the gym source does with one outcome: keep it in the store, turn it into the trainer's sample."""
    _keep_outcome(store, "train-x", outcome, step)
    (row,) = store.list_rollouts("train-x", with_items=True)
    return row, training_rollout(outcome, GymOptions())


def test_a_graded_rollout_is_the_same_in_the_store_and_in_the_trainer(store):
    outcome = RolloutOutcome(
        rollout_id="w-t-7",
        task=TASK,
        sample=3 * SAMPLES_PER_STEP + 5,
        trajectory=trajectory(),
        grade=grade("pass", "fail"),
        passed=False,
        seconds=4.0,
        seconds_play=2.5,
        seconds_grade=1.0,
    )
    row, rollout = keep_and_train(store, outcome)
    assert (row.task, row.sample, row.step, row.status) == (TASK, 3 * SAMPLES_PER_STEP + 5, 3, "done")
    assert str(row.grade_model()) == rollout.info["grade"] == "2/4"
    assert row.passed is rollout.passed is False
    assert row.incomplete is rollout.incomplete is False
    assert row.reward == rollout.reward == 0.5  # the raw reward equals the score when nothing was damaged
    assert row.turns == rollout.info["turns"] == 2 and row.stop_reason == rollout.info["stop_reason"]
    assert row.seconds == 4.0 and (rollout.info["seconds_play"], rollout.info["seconds_grade"]) == (2.5, 1.0)
    # the trained tokens are the stored trajectory's: both model turns, the tool result masked between them
    (sample,) = rollout.samples
    stored = row.trajectory_model()
    assert sample.token_ids == [*stored.steps[1].turn.prompt_token_ids, *stored.steps[1].turn.token_ids]
    assert sample.mask == [0, 0, 0, 1, 1, 0, 1]
    assert sum(sample.mask) == rollout.info["completion_tokens"] == 3


def test_an_incomplete_grade_is_kept_unjudged_and_left_out_of_training(store):
    outcome = RolloutOutcome(
        rollout_id="w-t-1", task=TASK, sample=1, trajectory=trajectory(), grade=grade("pass", "error")
    )
    row, rollout = keep_and_train(store, outcome)
    assert row.status == "done" and row.incomplete and rollout.incomplete
    assert row.passed is None and rollout.passed is None


def test_a_failed_rollout_is_stored_failed_with_the_error_the_trainer_logs(store):
    outcome = RolloutOutcome(
        rollout_id="w-t-2",
        task=TASK,
        sample=2,
        trajectory=trajectory(),
        error="SandboxError: the grader's probe could not start",
    )
    row, rollout = keep_and_train(store, outcome)
    assert row.status == "failed" and row.grade_model() is None and row.turns == 2
    assert row.error == rollout.info["error"] == outcome.error
    assert rollout.incomplete and rollout.samples == [] and rollout.reward == 0.0


def test_the_trainer_sees_how_much_of_each_rollouts_prompts_came_from_the_prefix_cache():
    read = trajectory()
    cached = read.model_copy(deep=True)
    for step, hits in zip(cached.steps, (0, 3), strict=True):
        step.turn.prompt_tokens, step.turn.cached_tokens = len(step.turn.prompt_token_ids), hits
    outcome = RolloutOutcome(rollout_id="w-t-3", task=TASK, sample=3, trajectory=cached, grade=grade("pass"))
    info = training_rollout(outcome, GymOptions()).info
    assert (info["prompt_tokens"], info["cached_tokens"]) == (3 + 6, 0 + 3)
    # a policy whose engine does not say (an API) leaves it unknown rather than 0
    unknown = outcome.model_copy(update={"trajectory": read})
    assert training_rollout(unknown, GymOptions()).info["cached_tokens"] is None
