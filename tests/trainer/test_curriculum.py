"""Band-weighted task sampling: reproducible, resumable, excludes zero-weight bands, climbs family levels,
reads the band of the model being trained."""

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.errors import ConfigError
from gym.tasks import ModelBand
from trainer.config import CurriculumConfig
from trainer.curriculum import Curriculum, band_moves

MODEL = "hf:smollm2@0123456789ab"


@dataclass(frozen=True)
class T:
    key: str
    band: str | None  # the band of MODEL
    tags: list[str] = field(default_factory=list)
    others: dict[str, str] = field(default_factory=dict)  # other models' bands

    @property
    def bands(self) -> dict[str, Any]:
        own = {MODEL: self.band} if self.band else {}
        return {key: ModelBand(band=band) for key, band in {**self.others, **own}.items()}


def instance(family: str, level: int, seed: int, band: str | None) -> T:
    return T(f"acme/{family}-l{level}-s{seed}", band, [f"family:{family}", f"level:{level}"])


def curriculum(tasks, weights, seed, **kw) -> Curriculum:
    return Curriculum(tasks, weights, seed, model=MODEL, **kw)


TASKS = [T("a", "target"), T("b", "target"), T("c", "hard"), T("d", "too-hard"), T("e", None)]
WEIGHTS = {"target": 1.0, "hard": 0.5, "too-hard": 0.0, "unbanded": 0.25}


def test_zero_weight_band_never_sampled_and_weights_respected():
    cur = curriculum(TASKS, WEIGHTS, seed=1)
    counts = {t.key: 0 for t in TASKS}
    for _ in range(2000):
        for task in cur.sample(1):
            counts[task.key] += 1
    assert counts["d"] == 0
    assert counts["a"] > counts["c"] > counts["e"] > 0
    assert counts["a"] / counts["c"] == pytest.approx(2.0, rel=0.25)


def test_without_replacement_within_a_step():
    cur = curriculum(TASKS, WEIGHTS, seed=2)
    for _ in range(50):
        keys = [t.key for t in cur.sample(4)]
        assert len(set(keys)) == 4 and "d" not in keys
    assert len(cur.sample(10)) == 10  # more than the pool: with replacement


def test_state_round_trip_resumes_the_sequence():
    cur = curriculum(TASKS, WEIGHTS, seed=3)
    cur.sample(2)
    state = cur.state_dict()
    expected = [cur.sample(2) for _ in range(5)]
    other = curriculum(TASKS, WEIGHTS, seed=99)
    other.load_state_dict(state)
    assert [other.sample(2) for _ in range(5)] == expected


def test_no_sampleable_task_is_a_config_error_naming_the_tasks_and_the_fix():
    with pytest.raises(ConfigError) as caught:
        curriculum([T("d", "too-hard"), T("e", None)], {**WEIGHTS, "unbanded": 0.0}, seed=0)
    message = str(caught.value)
    assert f"for model {MODEL}" in message and "d (too-hard), e (unbanded)" in message
    assert "egym calibrate" in message and "band_weights.too-hard=" in message


def test_a_learned_level_promotes_the_next_and_is_sampled_less():
    # Level 0 is in the learning zone, level 1 calibrated too-hard (weight 0): only level 0 is drawn.
    tasks = [instance("price", 0, s, "target") for s in range(3)] + [
        instance("price", 1, s, "too-hard") for s in range(3)
    ]
    cur = curriculum(tasks, WEIGHTS, seed=0, promote_at=0.5, window=10, min_observed=4)
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
    cur = curriculum(tasks, WEIGHTS, seed=5, min_observed=2)
    cur.observe("acme/price-l0-s0", [True, True, None, False])
    state = cur.state_dict()
    expected = [cur.sample(3) for _ in range(4)]
    other = curriculum(tasks, WEIGHTS, seed=5, min_observed=2)
    other.load_state_dict(state)
    assert other.status() == cur.status() == {"acme/price L0": pytest.approx(2 / 3)}
    assert [other.sample(3) for _ in range(4)] == expected


def test_the_band_of_the_trained_model_is_read_and_another_models_is_not(caplog):
    # Level 0 is target for MODEL but too-easy for a 7B model; level 1 has only the 7B model's band.
    seven_b = "hf:qwen-7b@ba9876543210"
    tasks = [
        T("acme/p-l0-s0", "target", ["family:p", "level:0"], {seven_b: "too-easy"}),
        T("acme/p-l1-s0", None, ["family:p", "level:1"], {seven_b: "target", "unknown": "hard"}),
    ]
    weights = {"target": 1.0, "too-easy": 0.0, "hard": 0.5, "unbanded": 0.25}
    with caplog.at_level(logging.WARNING, logger="trainer.curriculum"):
        ours = curriculum(tasks, weights, seed=0)
    assert [ours.band(i) for i in range(2)] == ["target", "unbanded"]
    assert ours.weights() == [1.0, 0.25]
    (note,) = [r.getMessage() for r in caplog.records]
    assert f"1 of 2 training tasks have no band for model {MODEL}" in note
    assert f"{seven_b} (2 tasks)" in note and "unknown (1 tasks)" in note and MODEL + " (" in note
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="trainer.curriculum"):
        theirs = Curriculum(tasks, weights, 0, model=seven_b)
    assert [theirs.band(i) for i in range(2)] == ["too-easy", "target"]
    assert not caplog.records  # every task has a band for this model: nothing to say


def test_a_model_without_bands_falls_back_to_unbanded_and_says_so_once(caplog):
    with caplog.at_level(logging.WARNING, logger="trainer.curriculum"):
        cur = Curriculum(TASKS, WEIGHTS, 0, model="openai:gpt-4o-mini@api.openai.com/v1")
        cur.sample(2)
        cur.weights()
    assert {cur.band(i) for i in range(len(TASKS))} == {"unbanded"}
    (note,) = [r.getMessage() for r in caplog.records]
    assert "5 of 5 training tasks have no band for model openai:gpt-4o-mini@api.openai.com/v1" in note
    assert f"bands exist for {MODEL} (4 tasks)" in note and "egym calibrate" in note


def test_the_trainer_keys_its_model_as_calibrate_keys_the_hf_policys(tmp_path):
    from gym.policies import model_key as policy_model_key
    from trainer.config import ModelConfig
    from trainer.model import model_key

    (tmp_path / "model.safetensors").write_bytes(b"weights")
    assert model_key(ModelConfig(path=str(tmp_path))) == policy_model_key("hf", {"model": str(tmp_path)})
    assert model_key(ModelConfig(builder="toy")) == "builder:toy"


def test_a_too_hard_level_keeps_the_floor_weight_and_recovers_as_it_passes_again():
    weights = CurriculumConfig().band_weights  # the shipped weights: too-hard has a floor above 0
    tasks = [instance("price", 0, s, "target") for s in range(2)] + [
        instance("sort", 0, s, "target") for s in range(2)
    ]
    cur = curriculum(tasks, weights, seed=0, window=32, min_observed=8)
    cur.observe("acme/price-l0-s0", [False] * 8)  # 8 failures in a row: happens at a 10 % pass rate
    assert cur.level_bands() == {"acme/price L0": "too-hard", "acme/sort L0": "target"}
    assert cur.weights()[:2] == [weights["too-hard"]] * 2 and weights["too-hard"] > 0
    drawn = [t.key for _ in range(400) for t in cur.sample(1)]
    assert 0 < sum(k.startswith("acme/price") for k in drawn) < sum(k.startswith("acme/sort") for k in drawn)
    # Its next rollouts move it back: 1 pass in 12 is hard, 4 in 16 is target.
    cur.observe("acme/price-l0-s1", [True, False, False, False])
    assert cur.level_bands()["acme/price L0"] == "hard" and cur.weights()[0] == weights["hard"]
    cur.observe("acme/price-l0-s1", [True, True, True, False])
    assert cur.level_bands()["acme/price L0"] == "target" and cur.weights()[0] == weights["target"]


def test_band_moves_count_levels_per_band_and_name_the_ones_that_moved():
    tasks = [instance("price", lv, s, "hard") for lv in (0, 1) for s in range(2)] + [T("acme/close", None)]
    cur = curriculum(tasks, WEIGHTS, seed=0, min_observed=4)
    before = cur.level_bands()
    assert before == {"acme/price L0": "hard", "acme/price L1": "hard", "acme/close": "unbanded"}
    cur.observe("acme/price-l0-s1", [True, True, True, False])  # 3/4: learned
    cur.observe("acme/close", [True, False, False, False])  # 1/4: target
    moves = band_moves(before, cur.level_bands())
    assert moves["bands"] == {"too-hard": 0, "hard": 1, "target": 1, "too-easy": 1, "unbanded": 0}
    assert moves["band_changes"] == [
        {"level": "acme/price L0", "from": "hard", "to": "too-easy"},
        {"level": "acme/close", "from": "unbanded", "to": "target"},
    ]
    assert band_moves(cur.level_bands(), cur.level_bands())["band_changes"] == []


def test_the_trainer_reads_the_bands_of_the_model_named_by_bands_of(tmp_path):
    """A model retrained on another CPU has another key; `bands_of` points the curriculum at the first one's bands."""
    from trainer.config import build_config
    from trainer.loop import GRPOTrainer

    def bands(overrides: list[str]) -> list[str]:
        config = build_config({"model": {"builder": "toy"}, "output_dir": str(tmp_path)}, overrides)
        trainer = GRPOTrainer(config, rollouts=None, learner=None, train_tasks=TASKS)
        return [trainer.curriculum.band(i) for i in range(len(TASKS))]

    assert set(bands([])) == {"unbanded"}  # builder:toy was never calibrated
    assert bands([f"tasks.curriculum.bands_of={MODEL}"]) == [
        "target",
        "target",
        "hard",
        "too-hard",
        "unbanded",
    ]
