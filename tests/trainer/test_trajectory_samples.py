"""Multi-turn trajectories become samples where only the model's own tokens count."""

import pytest

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Step, ToolCall, ToolResult, Trajectory
from trainer.rollouts.trajectory import trajectory_samples


def _step(i, prompt, completion, logprobs=None):
    turn = AssistantTurn(
        content="x",
        tool_calls=[ToolCall(id=f"c{i}", name="bash", arguments="{}")],
        prompt_token_ids=prompt,
        token_ids=completion,
        logprobs=logprobs if logprobs is not None else [-0.1 * (j + 1) for j in range(len(completion))],
    )
    return Step(index=i, turn=turn, results=[ToolResult(call_id=f"c{i}", name="bash", output="out")])


def test_turns_extending_the_previous_sequence_merge_with_tool_tokens_masked():
    # turn 0: prompt [1,2,3] -> model [10,11]; tool result + template glue [20,21]; turn 1: model [12]
    traj = Trajectory(
        task="w/t",
        policy="hf",
        steps=[_step(0, [1, 2, 3], [10, 11]), _step(1, [1, 2, 3, 10, 11, 20, 21], [12])],
    )
    (sample,) = trajectory_samples(traj)
    assert sample.token_ids == [1, 2, 3, 10, 11, 20, 21, 12]
    assert sample.mask == [0, 0, 0, 1, 1, 0, 0, 1]
    assert sample.logprobs == pytest.approx([0, 0, 0, -0.1, -0.2, 0, 0, -0.1])


def test_compacted_context_gives_separate_samples():
    # the second prompt does not start with the first sequence (context was compacted): one sample per turn
    traj = Trajectory(
        task="w/t", policy="hf", steps=[_step(0, [1, 2, 3], [10, 11]), _step(1, [1, 2, 99, 20], [12, 13])]
    )
    first, second = trajectory_samples(traj)
    assert first.mask == [0, 0, 0, 1, 1]
    assert second.token_ids == [1, 2, 99, 20, 12, 13] and second.mask == [0, 0, 0, 0, 1, 1]
    assert trajectory_samples(traj, merge=False)[0].token_ids == [1, 2, 3, 10, 11]


def test_turn_without_token_ids_is_a_clear_error():
    step = Step(index=0, turn=AssistantTurn(content="hi"))
    with pytest.raises(PolicyError, match="no token ids"):
        trajectory_samples(Trajectory(task="w/t", policy="openai", steps=[step]))


def test_mismatched_logprobs_rejected():
    with pytest.raises(PolicyError, match="2 tokens but 1 logprobs"):
        trajectory_samples(Trajectory(task="w/t", policy="hf", steps=[_step(0, [1], [5, 6], [-0.1])]))
