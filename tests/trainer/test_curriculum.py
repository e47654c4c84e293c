"""Band-weighted task sampling: reproducible, resumable, excludes zero-weight bands, climbs family levels."""

from dataclasses import dataclass, field

import pytest

from core.errors import ConfigError
from trainer.curriculum import Curriculum


@dataclass(frozen=True)
class T:
    key: str
    band: str | None
    tags: list[str] = field(default_factory=list)


def instance(family: str, level: int, seed: int, band: str | None) -> T:
    return T(f"acme/{family}-l{level}-s{seed}", band, [f"family:{family}", f"level:{level}"])


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


def test_a_learned_level_promotes_the_next_and_is_sampled_less():
    # Level 0 is in the learning zone, level 1 calibrated too-hard (weight 0): only level 0 is drawn.
    tasks = [instance("price", 0, s, "target") for s in range(3)] + [
        instance("price", 1, s, "too-hard") for s in range(3)
    ]
    cur = Curriculum(tasks, WEIGHTS, seed=0, promote_at=0.5, window=10, min_observed=4)
    assert {t.key.split("-s")[0] for t in cur.sample(3)} == {"acme/price-l0"}
    cur.observe("acme/price-l0-s0", [True, False, True])
    assert cur.live_rate(("acme/price", 0)) is None  # 3 < min_observed: the calibrated band still rules
    cur.observe("acme/price-l0-s1", [True, True, True])  # 5/6 over the family level: learned
    assert cur.status() == {"acme/price L0": pytest.approx(5 / 6)}
    weights = cur.weights()
    assert weights[:3] == [0.0] * 3  # too-easy now, and WEIGHTS gives too-easy nothing
    assert weights[3:] == [1.0] * 3  # level 1 promoted to the target weight
    # Level 1's own rollouts then decide: all failures make it too-hard again.
    cur.observe("acme/price-l1-s2", [False] * 4)
    assert cur.weights()[3:] == [0.0] * 3


def test_live_outcomes_resume_exactly():
    tasks = [instance("price", lv, s, "target") for lv in (0, 1) for s in range(4)]
    cur = Curriculum(tasks, WEIGHTS, seed=5, min_observed=2)
    cur.observe("acme/price-l0-s0", [True, True, None, False])
    state = cur.state_dict()
    expected = [cur.sample(3) for _ in range(4)]
    other = Curriculum(tasks, WEIGHTS, seed=5, min_observed=2)
    other.load_state_dict(state)
    assert other.status() == cur.status() == {"acme/price L0": pytest.approx(2 / 3)}
    assert [other.sample(3) for _ in range(4)] == expected
