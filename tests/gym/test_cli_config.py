"""Config is checked where a command starts: a mistyped key fails the command before any rollout, with the
key, where it came from and the closest valid name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from core.errors import ConfigError, PolicyError
from core.plugins import Registry
from gym.cli import app
from gym.harness.config import harness_config

TASK = Path(__file__).resolve().parents[2] / "tasks" / "acme" / "collections-list"
runner = CliRunner()


@pytest.fixture
def no_sandbox(monkeypatch, tmp_path):
    """Any episode start fails the test: the command must stop before it."""

    def refuse(*args, **kwargs):
        raise AssertionError("a sandbox was started although the command's config was wrong")

    monkeypatch.setattr("gym.sandbox.launch.task_sandbox", refuse)
    monkeypatch.setenv("EGYM_STORE", str(tmp_path / "runs.db"))


@pytest.mark.parametrize("command", ["batch", "rollout", "calibrate"])
def test_a_mistyped_harness_key_fails_the_command_before_any_rollout(no_sandbox, command):
    result = runner.invoke(app, [command, str(TASK), "--policy", "null", "-H", "max_turn=3"])
    assert result.exit_code == 2, result.output
    assert "--harness.max_turn: unknown key; did you mean 'max_turns'?" in result.output


def test_a_nested_harness_key_and_a_bad_value_are_named(no_sandbox):
    result = runner.invoke(app, ["batch", str(TASK), "--policy", "null", "-H", "faults.rat=0.1"])
    assert (
        result.exit_code == 2 and "--harness.faults.rat: unknown key; did you mean 'rate'?" in result.output
    )
    result = runner.invoke(app, ["batch", str(TASK), "--policy", "null", "-H", "faults.rate=2"])
    assert result.exit_code == 2 and "--harness.faults.rate: 2 is out of range (must be ≤ 1)" in result.output


def test_a_mistyped_policy_option_fails_the_command_before_any_rollout(no_sandbox):
    result = runner.invoke(app, ["batch", str(TASK), "--policy", "openai", "-o", "temprature=0.7"])
    assert result.exit_code == 2, result.output
    assert (
        "--option temprature: policy 'openai' takes no option 'temprature'; did you mean 'temperature'?"
        in result.output
    )


def test_a_malformed_override_names_its_flag(no_sandbox):
    result = runner.invoke(app, ["batch", str(TASK), "--policy", "null", "-H", "max_turns"])
    assert result.exit_code == 2 and "--harness 'max_turns': expected key=value" in result.output


def test_the_trainer_refuses_a_mistyped_harness_key_when_its_rollout_source_is_built():
    from trainer.rollouts.gym_source import GymRolloutSource

    config = SimpleNamespace(rollout=SimpleNamespace(options={"harness": {"max_turn": 3}}))
    with pytest.raises(
        ConfigError, match=r"rollout\.options\.harness\.max_turn: unknown key; did you mean 'max_turns'\?"
    ):
        GymRolloutSource(config, tokenizer=None)


def test_harness_config_accepts_the_model_or_its_fields():
    config = harness_config({"max_turns": 3, "faults": {"rate": 0.5}})
    assert config.max_turns == 3 and config.faults.rate == 0.5
    assert harness_config(config) is config


def test_installed_plugins_are_found_by_name(monkeypatch):
    """A third-party package's entry point makes its policy usable by name, without editing egym."""
    from gym.policies import POLICIES, make_policy

    fake = [SimpleNamespace(name="echo-bot", value="gym.policies.null:NullPolicy")]
    monkeypatch.setattr("core.plugins.entry_points", lambda group: fake if group == "egym.policies" else [])
    POLICIES.__dict__.pop("_installed", None)  # forget what this process read
    try:
        assert "echo-bot" in POLICIES.names()
        assert make_policy("echo-bot", answer="hi").answer == "hi"
    finally:
        monkeypatch.undo()
        POLICIES.__dict__.pop("_installed", None)


def test_an_installed_check_is_found_by_name(monkeypatch):
    from grader.checks import INSTALLED, resolve

    fake = [SimpleNamespace(name="ledger-balanced", value="grader.checks.sql:row_exists")]
    monkeypatch.setattr("core.plugins.entry_points", lambda group: fake if group == "egym.checks" else [])
    INSTALLED.__dict__.pop("_installed", None)
    try:
        from grader.checks.sql import row_exists

        assert resolve("ledger-balanced") is row_exists
    finally:
        monkeypatch.undo()
        INSTALLED.__dict__.pop("_installed", None)


def test_unknown_plugin_names_suggest_the_closest():
    registry = Registry("widget", "egym.widgets-test", error=PolicyError)
    registry.register("sprocket", "gym.policies.null:NullPolicy")
    with pytest.raises(PolicyError, match="unknown widget 'sprockit'; did you mean 'sprocket'"):
        registry.load("sprockit")
    with pytest.raises(PolicyError, match="has no attribute 'NulPolicy'; did you mean 'NullPolicy'"):
        registry.load("gym.policies.null:NulPolicy")
