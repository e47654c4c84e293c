"""Band-weighted task sampling: reproducible, resumable, excludes zero-weight bands."""

from dataclasses import dataclass

import pytest

from core.errors import ConfigError
from trainer.curriculum import Curriculum


@dataclass(frozen=True)
class T:
    key: str
    band: str | None


TASKS = [T("a", "target"), T("b", "target"), T("c", "hard"), T("d", "too-hard"), T("e", None)]
WEIGHTS = {"target": 1.0, "hard": 0.5, "too-hard": 0.0, "unbanded": 0.25}


def test_zero_weight_band_never_sampled_and_weights_respected():
    cur = Curriculum(TASKS, WEIGHTS, seed=1)
    counts = {t.key: 0 for t in TASKS}
    for _ in range(2000):
        for task in cur.sample(1):
            counts[task.key] += 1
    assert counts["d"] == 0
    assert counts["a"] > counts["c"] > counts["e"] > 0
    assert counts["a"] / counts["c"] == pytest.approx(2.0, rel=0.25)


def test_without_replacement_within_a_step():
    cur = Curriculum(TASKS, WEIGHTS, seed=2)
    for _ in range(50):
        keys = [t.key for t in cur.sample(4)]
        assert len(set(keys)) == 4 and "d" not in keys
    assert len(cur.sample(10)) == 10  # more than the pool: with replacement


def test_state_round_trip_resumes_the_sequence():
    cur = Curriculum(TASKS, WEIGHTS, seed=3)
    cur.sample(2)
    state = cur.state_dict()
    expected = [cur.sample(2) for _ in range(5)]
    other = Curriculum(TASKS, WEIGHTS, seed=99)
    other.load_state_dict(state)
    assert [other.sample(2) for _ in range(5)] == expected


def test_no_sampleable_task_is_a_config_error_naming_the_tasks_and_the_fix():
    with pytest.raises(ConfigError) as caught:
        Curriculum([T("d", "too-hard"), T("e", None)], {**WEIGHTS, "unbanded": 0.0}, seed=0)
    message = str(caught.value)
    assert "d (too-hard), e (unbanded)" in message
    assert "egym calibrate" in message and "band_weights.too-hard=" in message
