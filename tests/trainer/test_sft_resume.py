"""`egym sft` killed mid-run goes on from its last checkpoint to the same weights as a run left alone."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from core.errors import ConfigError
from gym.sft import format_id
from trainer.sft import SFTConfig, run_sft
from trainer.toy import build_toy_tokenizer

BUILDER = "bench.gpu_models:TINY_TOY_VOCAB"


class Killed(Exception):
    pass


@pytest.fixture
def data(tmp_path) -> Path:
    tokenizer = build_toy_tokenizer()
    rng = random.Random(0)
    words = range(3, len(tokenizer))
    folder = tmp_path / "data"
    folder.mkdir()
    examples = [
        {
            "prompt_ids": [rng.choice(words) for _ in range(rng.randrange(4, 30))],
            "completion_ids": [rng.choice(words) for _ in range(rng.randrange(2, 8))],
        }
        for _ in range(10)
    ]
    (folder / "data.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))
    (folder / "manifest.json").write_text(json.dumps({"format": format_id(tokenizer), "splits": {}}))
    return folder


def _config(data: Path, out: Path, **changes) -> SFTConfig:
    return SFTConfig.model_validate(
        {
            "data": str(data),
            "output_dir": str(out),
            "model": {"builder": BUILDER},
            "epochs": 2,
            "lr": 1e-3,
            "batch_size": 4,  # 10 examples: 3 steps an epoch, the last one short
            "micro_batch_size": 2,
            "threads": 1,
            "checkpoint_every": 2,
            **changes,
        }
    )


def _run_until_killed(config: SFTConfig, at_step: int) -> None:
    """Run `config` and kill it as step `at_step` lands, as a crash would."""

    def kill(record):
        if record["step"] == at_step:
            raise Killed

    with pytest.raises(Killed):
        run_sft(config, on_step=kill)


def _weights(out: Path) -> dict[str, torch.Tensor]:
    return load_file(str(out / "model" / "model.safetensors"))


def test_a_killed_run_goes_on_to_the_same_weights_and_metrics(data, tmp_path):
    whole = run_sft(_config(data, tmp_path / "whole"))
    assert [r["step"] for r in whole] == [1, 2, 3, 4, 5, 6]

    cut = tmp_path / "cut"
    _run_until_killed(_config(data, cut), at_step=5)
    assert [p.name for p in (cut / "checkpoints").iterdir()] == ["step-000004"]  # keeps the newest only

    again = run_sft(_config(data, cut, threads=2))  # threads may change between the two
    assert [r["step"] for r in again] == [1, 2, 3, 4, 5, 6]
    assert [r["loss"] for r in again] == [r["loss"] for r in whole]
    lines = (cut / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2, 3, 4, 5, 6]  # step 5 once, not twice
    expected, got = _weights(tmp_path / "whole"), _weights(cut)
    assert expected.keys() == got.keys()
    assert all(torch.equal(expected[k], got[k]) for k in expected)
    assert not (cut / "checkpoints").exists()  # the model is written: the checkpoints go


def test_a_checkpoint_of_another_config_is_refused_by_name(data, tmp_path):
    out = tmp_path / "run"
    _run_until_killed(_config(data, out), at_step=3)
    with pytest.raises(ConfigError, match=r"step-000002: a checkpoint of another SFT config \(lr differ\)"):
        run_sft(_config(data, out, lr=5e-4))


def test_no_checkpoints_when_switched_off(data, tmp_path):
    out = tmp_path / "run"
    _run_until_killed(_config(data, out, checkpoint_every=0), at_step=3)
    assert not (out / "checkpoints").exists()
