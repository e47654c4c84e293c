"""Dynamic sampling (rollout.resample_rounds): groups without reward variance are replaced by fresh groups.

Scripted rollouts and learner, so the loop's bookkeeping is what is tested: which tasks are
sampled again, how many groups reach the update, and what the step's record says.
"""

from __future__ import annotations

from pathlib import Path

from trainer.config import build_config
from trainer.loop import GRPOTrainer
from trainer.samplers.base import WeightUpdate
from trainer.samples import Group, Rollout, Sample
from trainer.toy import ToyTask


class ScriptedRollouts:
    """Per step, the groups of the first `flat_calls` collects have equal rewards; later ones differ."""

    def __init__(self, flat_calls: int) -> None:
        self.flat_calls, self.calls = flat_calls, []

    def collect(self, tasks, group_size, seeds, *, step=0, phase="train", on_rollout=None):
        made = sum(1 for s, _ in self.calls if s == step)
        self.calls.append((step, len(tasks)))
        rewards = [0.0] * group_size if made < self.flat_calls else [float(i % 2) for i in range(group_size)]
        sample = Sample(token_ids=[1, 2], mask=[0, 1], logprobs=[0.0, -1.0])
        return [Group(t.key, [Rollout([sample], reward=r, passed=r > 0.5) for r in rewards]) for t in tasks]

    def sync(self, update):
        pass


class CountingLearner:
    def __init__(self) -> None:
        self.trajectories = []

    def update(self, items):
        self.trajectories.append(len({item.trajectory for item in items}))
        return {"loss": 0.0}

    def weight_update(self, version):
        return WeightUpdate(version=version)

    def save(self, step, state):
        return Path("unused")

    def load(self, path):
        raise AssertionError("no resume in this test")


def run(tmp_path, rounds: int, flat_calls: int):
    config = build_config(
        {
            "steps": 2,
            "output_dir": str(tmp_path),
            "model": {"builder": "toy"},
            "rollout": {"source": "toy", "group_size": 4, "tasks_per_step": 3, "resample_rounds": rounds},
            "checkpoint": {"interval": 0, "resume": "never"},
        }
    )
    rollouts, learner = ScriptedRollouts(flat_calls), CountingLearner()
    tasks = [ToyTask(key=f"toy/{w}", word=w) for w in ("a", "b", "c", "d")]
    records = GRPOTrainer(config, rollouts=rollouts, learner=learner, train_tasks=tasks).run()
    return records, rollouts.calls, learner.trajectories


def test_groups_without_signal_are_replaced_by_fresh_ones(tmp_path):
    records, calls, trained = run(tmp_path, rounds=2, flat_calls=1)
    assert calls == [(1, 3), (1, 3), (2, 3), (2, 3)]  # each step: 3 flat groups, then 3 fresh ones
    assert trained == [12, 12]  # the fresh groups' 3 x 4 rollouts reach the update
    for record in records:
        assert record["groups_resampled"] == 3 and record["groups"] == 6
        assert (
            record["groups_zero_variance"] == 3 and record["groups_kept"] == 3
        )  # the flat ones stay counted
        assert record["zero_variance_share"] == 0.5


def test_resampling_stops_after_its_rounds_and_without_it_flat_groups_are_only_dropped(tmp_path):
    records, calls, trained = run(tmp_path / "capped", rounds=2, flat_calls=5)
    assert [n for step, n in calls if step == 1] == [3, 3, 3]  # the first collect and two rounds, no more
    assert trained == [] and records[0]["groups_resampled"] == 6 and records[0]["loss"] is None
    records, calls, trained = run(tmp_path / "off", rounds=0, flat_calls=1)
    assert calls == [(1, 3), (2, 3)] and trained == []
    assert records[0]["groups_resampled"] == 0 and records[0]["zero_variance_share"] == 1.0
