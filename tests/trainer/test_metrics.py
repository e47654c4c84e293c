"""The trainer's per-step metrics on a tiny toy run: the drift diagnostics and the curriculum's bands in the
JSONL, and the same numbers in TensorBoard event files beside it (read back with TensorBoard's own reader)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from trainer.config import build_config
from trainer.curriculum import BANDS
from trainer.local import build_trainer
from trainer.metrics import scalars


@pytest.fixture(autouse=True)
def _threads():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _run(out: Path, steps: int, checkpoints: int = 0) -> list[dict]:
    config = build_config(
        {
            "seed": 0,
            "steps": steps,
            "output_dir": str(out),
            "model": {"builder": "toy"},
            "rollout": {"source": "toy", "group_size": 8, "tasks_per_step": 3},
            "sampling": {"max_new_tokens": 4},
            "optim": {"lr": 0.003, "warmup_steps": 2},
            "update": {"micro_batch_size": 48},
            "checkpoint": {"interval": checkpoints},
            "logging": {"tensorboard": True},
        }
    )
    build_trainer(config).run()
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def _events(out: Path) -> EventAccumulator:
    events = EventAccumulator(str(out), size_guidance={"scalars": 0})
    events.Reload()
    return events


def test_drift_and_bands_per_step_and_tensorboard_holds_the_same_numbers(tmp_path):
    records = _run(tmp_path, steps=3)
    assert [r["step"] for r in records] == [1, 2, 3]
    first, second = records[0], records[1]
    assert first["kl_ref"] == 0.0 < second["kl_ref"]  # kl_coef 0, and still measured
    assert all(r["entropy"] > 0 and r["grad_norm"] > 0 and r["clip_frac"] is not None for r in records)
    assert [r["lr"] for r in records] == pytest.approx([0.0015, 0.003, 0.003])
    assert all(r["tokens_prompt"] > 0 and r["tokens_generated"] > 0 for r in records)
    # The six toy tasks are six levels: all counted per band after each step, and each count follows
    # from the one before and the step's moves.
    previous = {band: 6 if band == "unbanded" else 0 for band in BANDS}
    for record in records:
        assert list(record["bands"]) == list(BANDS) and sum(record["bands"].values()) == 6
        for move in record["band_changes"]:
            previous[move["from"]] -= 1
            previous[move["to"]] += 1
        assert record["bands"] == previous
    assert len(first["band_changes"]) == 3  # 8 rollouts of each of the step's 3 tasks: a live band each

    events = _events(tmp_path)
    tags = set(events.Tags()["scalars"])
    expected = {tag: [v for r in records for t, v in scalars(r) if t == tag] for tag in tags}
    assert {"kl_ref", "entropy", "grad_norm", "lr", "tokens_prompt", "bands/too-hard", "bands/target"} <= tags
    assert tags == {tag for r in records for tag, _ in scalars(r)}  # every number, nothing else
    for tag in tags:
        logged = events.Scalars(tag)
        assert [e.step for e in logged] == [r["step"] for r in records if tag in dict(scalars(r))]
        assert [e.value for e in logged] == pytest.approx(expected[tag], rel=1e-6, abs=1e-30), tag


def test_a_resumed_run_replaces_the_redone_steps_in_tensorboard(tmp_path):
    first = _run(tmp_path, steps=2, checkpoints=1)
    shutil.rmtree(tmp_path / "checkpoints" / "step-000002")  # killed after logging step 2, before saving it
    again = _run(tmp_path, steps=2, checkpoints=1)  # resumes from step 1 and redoes step 2
    assert [r["step"] for r in again] == [1, 2]
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2
    logged = _events(tmp_path).Scalars("reward_mean")
    assert [e.step for e in logged] == [1, 2]  # the first run's step 2 is hidden, not shown twice
    assert logged[1].value == pytest.approx(first[1]["reward_mean"], rel=1e-6)
