"""Config loading: YAML + dotted overrides, strict keys, registries with helpful errors."""

import pytest

from core.errors import ConfigError
from core.overrides import apply_overrides
from trainer.config import build_config, load_config
from trainer.registry import SOURCES


def test_overrides_parse_yaml_scalars_and_create_sections():
    data = apply_overrides(
        {"a": {"b": 1}}, ["a.b=2", "a.c=true", "d.e.f=[x, y]", "g=1e-6", "h=null", "i=text"]
    )
    assert data == {
        "a": {"b": 2, "c": True},
        "d": {"e": {"f": ["x", "y"]}},
        "g": 1e-6,
        "h": None,
        "i": "text",
    }


@pytest.mark.parametrize("bad", ["noequals", "=3", "a..b=1"])
def test_malformed_override(bad):
    with pytest.raises(ConfigError, match=r"expected key=value \(dotted for nested\)"):
        apply_overrides({}, [bad])


def test_override_into_a_value_is_an_error():
    with pytest.raises(ConfigError, match="'a' is a value"):
        apply_overrides({"a": 1}, ["a.b=2"])


def test_shipped_configs_load(tmp_path):
    cfg = load_config("trainer/configs/toy.yaml", ["loss.clip_high=0.28", "rollout.group_size=4"])
    assert cfg.loss.clip_high == 0.28 and cfg.rollout.group_size == 4 and cfg.loss.kl_coef == 0.0
    gpu = load_config("trainer/configs/gpu-qwen-lora.yaml")
    assert gpu.sampler.backend == "vllm" and gpu.model.lora.enabled and gpu.ray.enabled


def test_typo_in_a_key_names_it():
    with pytest.raises(ConfigError, match="loss.clip_hihg: unknown key; did you mean .clip_high."):
        build_config({"model": {"builder": "toy"}}, ["loss.clip_hihg=0.3"])


def test_model_needs_exactly_one_source():
    with pytest.raises(ConfigError, match="exactly one of model.path or model.builder"):
        build_config({"model": {"builder": "toy", "path": "x"}})


def test_unknown_band_and_normalisation_rejected():
    with pytest.raises(ConfigError, match="unknown band"):
        build_config({"model": {"builder": "toy"}}, ["tasks.curriculum.band_weights.medium=1"])
    with pytest.raises(ConfigError, match="loss.normalization"):
        build_config({"model": {"builder": "toy"}}, ["loss.normalization=batch"])


def test_registry_did_you_mean():
    with pytest.raises(ConfigError, match="did you mean 'toy'"):
        SOURCES.load("tyo")
    with pytest.raises(
        ConfigError, match="trainer.toy has no attribute 'ToyRolloutSourc'; did you mean 'ToyRolloutSource'"
    ):
        SOURCES.load("trainer.toy:ToyRolloutSourc")


def test_too_hard_keeps_a_floor_and_left_out_bands_keep_their_default():
    with pytest.raises(ConfigError, match="band_weights.too-hard must be above 0"):
        build_config({"model": {"builder": "toy"}}, ["tasks.curriculum.band_weights.too-hard=0"])
    cfg = build_config({"model": {"builder": "toy"}}, ["tasks.curriculum.band_weights.hard=0.3"])
    weights = cfg.tasks.curriculum.band_weights
    assert weights["hard"] == 0.3 and weights["target"] == 1.0 and weights["too-hard"] > 0


def test_tasks_default_to_every_known_world_so_a_config_works_from_any_folder(tmp_path, monkeypatch):
    from trainer.config import TasksConfig

    monkeypatch.chdir(tmp_path)  # no ./tasks here: the acme world comes from its entry point
    assert "acme" in TasksConfig().refs()
    assert TasksConfig(paths=["acme/q1-close"]).refs() == ["acme/q1-close"]
