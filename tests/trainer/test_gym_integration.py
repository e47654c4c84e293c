"""One GRPO step end to end through real sandboxes: the gym's harness, the `hf` policy, the rubric grader.

A tiny chat model (tests/trainer/gym_policy_fixture.py) answers the mini
task's prompt either with a `write` tool call that earns the note's 3 of 8
points, or with "done." (0 points). Six rollouts of one task run in real
containers (PostgreSQL seeded, tools executed as the agent user), are graded
by the task's rubric, and become one update: this checks that trajectories,
rewards and token masks flow from the gym into the trainer.

Rollouts run one at a time: the `hf` policy samples from the global torch RNG
(seeded by the trainer), so a fixed order of calls makes the group's answers,
and so its mix of rewards, the same on every run.
"""

from __future__ import annotations

import pytest
import torch

from tests.gym.task_fixture import write_mini_world
from tests.trainer import gym_policy_fixture
from trainer.config import build_config
from trainer.local import build_trainer

pytestmark = [pytest.mark.docker, pytest.mark.slow]
_TASK: dict = {}


def tiny_chat_model(seed: int):
    """Model builder named in the config (`model.builder`); the task comes from the fixture below."""
    return gym_policy_fixture.build_model(_TASK["task"], _TASK["world"], seed=seed, sft_steps=150)


@pytest.fixture
def mini_task(tmp_path, docker_image):
    from gym.tasks import discover_tasks, world_of

    world_dir = write_mini_world(tmp_path)
    task = discover_tasks(world_dir)[0]
    _TASK.update(task=task, world=world_of(task))
    yield world_dir
    _TASK.clear()


class Recording:
    """Wraps the trainer's rollouts to keep the groups it produced."""

    def __init__(self, inner):
        self.inner, self.groups = inner, []

    def collect(self, tasks, group_size, seeds, **what):
        groups = self.inner.collect(tasks, group_size, seeds, **what)
        self.groups += groups
        return groups

    def sync(self, update):
        self.inner.sync(update)


def test_one_training_step_through_real_sandboxes(tmp_path, mini_task):
    torch.set_num_threads(1)
    config = build_config(
        {
            "seed": 0,
            "steps": 1,
            "output_dir": str(tmp_path / "run"),
            "model": {"builder": f"{__name__}:tiny_chat_model"},
            "tasks": {"paths": [str(mini_task)]},
            "rollout": {
                "source": "gym",
                "group_size": 6,
                "tasks_per_step": 1,
                "concurrency": 1,
                "options": {
                    "harness": {"max_turns": 2, "mcp_servers": {}},
                    "run_id": "pytest-trainer",
                    "store": str(tmp_path / "runs.db"),
                },
            },
            "sampling": {"temperature": 0.5, "max_new_tokens": 48},
            "optim": {"lr": 1e-3},
            "update": {"micro_batch_size": 6},
            "checkpoint": {"interval": 0},
        }
    )
    trainer = build_trainer(config)
    trainer.rollouts = recording = Recording(trainer.rollouts)
    model = trainer.learner.learner.model
    before = {k: v.clone() for k, v in model.state_dict().items()}

    shown = []
    (record,) = trainer.run(on_progress=lambda p: shown.append((p.phase, p.done, p.total)))

    (group,) = recording.groups
    assert group.task == "mini/ship-order" and len(group.rollouts) == 6
    assert record["rollouts"] == 6 and record["rollouts_incomplete"] == 0, [r.info for r in group.rollouts]
    for rollout in group.rollouts:
        earned, possible = rollout.info["grade"].split("/")
        assert rollout.reward == pytest.approx(
            float(earned) / float(possible)
        )  # reward = rubric's normalised score
        assert rollout.samples and all(s.mask[0] == 0 for s in rollout.samples)  # the prompt is masked
        assert sum(s.model_tokens for s in rollout.samples) == rollout.info["completion_tokens"]
        if rollout.info["turns"] == 2:
            # the tool result between the two turns is masked: two runs of model tokens with a gap of zeros
            mask = "".join(map(str, (m for s in rollout.samples for m in s.mask)))
            assert len([run for run in mask.split("0") if run]) == 2 and "10" in mask.rstrip("0")
    rewards = {round(r.reward, 3) for r in group.rollouts}
    assert rewards == {0.0, 0.375}, "the group should mix the note-writing answer (3/8) and 'done.' (0/8)"
    assert any(r.info["turns"] == 2 for r in group.rollouts)

    # the group carried a signal, so the step updated the policy
    assert record["groups_kept"] == 1 and record["loss"] is not None
    assert record["tokens_model"] == sum(r.info["completion_tokens"] for r in group.rollouts)
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())

    # progress was shown after every rollout, then for the update
    sequences = sum(len(r.samples) for r in group.rollouts)
    assert shown == [("rollouts", i, 6) for i in range(7)] + [("update", 0, sequences)]
    assert record["rollout_play_s"] > 0 and record["rollout_grade_s"] > 0

    # the engine's prefix cache: the six rollouts' first turns share one prompt, read once, then reused
    infos = [r.info for r in group.rollouts]
    hit_rate = sum(i["cached_tokens"] for i in infos) / sum(i["prompt_tokens"] for i in infos)
    assert record["prefix_cache_hit_rate"] == pytest.approx(hit_rate) and hit_rate > 0.5

    # every rollout is in the run store under the training run, with its step, trajectory and grade
    from gym.store import Store

    store = Store(str(tmp_path / "runs.db"))
    (run,) = store.list_runs(kind="train")
    assert run.config["output_dir"] == str(tmp_path / "run")
    rows = store.list_rollouts(run.id, step=1, with_items=True)
    assert len(rows) == 6 and {row.status for row in rows} == {"done"}
    assert sorted(str(row.grade_model()) for row in rows) == sorted(r.info["grade"] for r in group.rollouts)
    assert all(row.trajectory_model().task == "mini/ship-order" for row in rows)
    store.close()
