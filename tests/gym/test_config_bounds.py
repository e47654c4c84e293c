"""Configuration refused by name: unknown keys before missing ones, and limits with bounds a person would accept."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ConfigError, TaskError
from gym.harness.config import harness_config
from gym.tasks import load_task


def _task(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "task.yaml").write_text("id: t\ntitle: T\nworld: w\n" + body)
    return folder


def _error(tmp_path: Path, body: str) -> str:
    folder = _task(tmp_path, body)
    with pytest.raises(TaskError) as caught:
        load_task(folder)
    message = str(caught.value)
    assert "\n" not in message
    return message.removeprefix(f"{folder / 'task.yaml'}: ")


def test_a_typo_is_reported_as_the_unknown_key_not_as_the_missing_one(tmp_path):
    assert _error(tmp_path, "promt: Do it.\n") == "promt: unknown key; did you mean 'prompt'? (+1 more)"


@pytest.mark.parametrize(
    "limits, message",
    [
        ("max_turns: 1e29", "limits.max_turns: 1e29 is not a whole number (must be ≥ 1 and ≤ 1000)"),
        ("max_turns: 2.5", "limits.max_turns: 2.5 is not a whole number (must be ≥ 1 and ≤ 1000)"),
        ("max_turns: 5000", "limits.max_turns: 5000 is out of range (must be ≤ 1000)"),
        ("time_limit_s: 1e308", "limits.time_limit_s: 1e308 is out of range (must be ≤ 86400)"),
        ("time_limit_s: 1e-6", "limits.time_limit_s: 1e-6 is out of range (must be ≥ 1)"),
        ("tool_timeout_s: .inf", "limits.tool_timeout_s: inf is not a finite number"),
        ("tool_timeout_s: .nan", "limits.tool_timeout_s: nan is not a finite number"),
    ],
)
def test_out_of_range_limits_name_the_key_the_value_and_the_bound(tmp_path, limits, message):
    assert _error(tmp_path, f"prompt: Do it.\nlimits: {{{limits}}}\n") == message


def test_limits_inside_the_bounds_are_kept_exactly(tmp_path):
    task = load_task(
        _task(
            tmp_path, "prompt: Do it.\nlimits: {max_turns: 1000, time_limit_s: 86400, tool_timeout_s: 0.1}\n"
        )
    )
    assert (task.limits.max_turns, task.limits.time_limit_s, task.limits.tool_timeout_s) == (1000, 86400, 0.1)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"max_turns": 10**6}, "harness.max_turns: 1000000 is out of range (must be ≤ 1000)"),
        ({"tool_timeout_s": float("inf")}, "harness.tool_timeout_s: inf is not a finite number"),
        ({"faults": {"rate": 2}}, "harness.faults.rate: 2 is out of range (must be ≤ 1)"),
        ({"max_turn": 3}, "harness.max_turn: unknown key; did you mean 'max_turns'?"),
    ],
)
def test_harness_settings_are_refused_by_name(settings, message):
    with pytest.raises(ConfigError) as caught:
        harness_config(settings)
    assert str(caught.value) == message
