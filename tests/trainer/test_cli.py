"""`egym train`: runs a config with overrides, prints one line per step, one-line errors."""

import json

from typer.testing import CliRunner

from gym.cli import app

runner = CliRunner()


def test_train_toy_config_with_overrides(tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["train", "trainer/configs/toy.yaml", "steps=2", f"output_dir={out}", "rollout.group_size=4"]
    )
    assert result.exit_code == 0, result.output
    assert "step     2" in result.output
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2] and records[0]["rollouts"] == 24
    assert (out / "checkpoints/step-000002/state.json").is_file()


def test_bad_override_is_one_line_exit_2():
    result = runner.invoke(app, ["train", "trainer/configs/toy.yaml", "loss.clip_hihg=1"])
    assert result.exit_code == 2
    assert "loss.clip_hihg" in result.output and "Traceback" not in result.output


def test_print_config():
    result = runner.invoke(app, ["train", "trainer/configs/toy.yaml", "--print-config", "seed=7"])
    assert result.exit_code == 0 and "seed: 7" in result.output
