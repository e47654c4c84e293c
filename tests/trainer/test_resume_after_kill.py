"""A training run killed with SIGKILL mid-run resumes from its last checkpoint and ends as an uninterrupted one.

Both runs are real `egym train` processes on the toy config (no download, a few seconds).
The kill lands wherever the run is when its metrics show step 6 (checkpoints every 4
steps): mid-step, mid-checkpoint-write or between steps; the restarted run resumes
from step 4, redoes the lost steps, and its metrics must match the uninterrupted
run's step for step (timings aside).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.trainer.test_learning import _same, _strip

pytestmark = pytest.mark.slow
EGYM = str(Path(sys.executable).with_name("egym"))
ENV = {**os.environ, "EGYM_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}  # one thread: exact sums


def _train(out: Path) -> list[str]:
    return [
        EGYM,
        "train",
        "trainer/configs/toy.yaml",
        "steps=12",
        "checkpoint.interval=4",
        f"output_dir={out}",
    ]


def _metrics(out: Path) -> list[dict]:
    path = out / "metrics.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.endswith("}")]


def test_a_run_killed_mid_run_resumes_to_the_same_metrics(tmp_path):
    subprocess.run(_train(tmp_path / "whole"), check=True, env=ENV, capture_output=True)
    whole = _metrics(tmp_path / "whole")
    assert [r["step"] for r in whole] == list(range(1, 13))

    killed = subprocess.Popen(
        _train(tmp_path / "killed"), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while len(_metrics(tmp_path / "killed")) < 6 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert killed.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    before = len(_metrics(tmp_path / "killed"))
    assert 6 <= before < 12 and (tmp_path / "killed/checkpoints/step-000004").is_dir()

    resumed = subprocess.run(_train(tmp_path / "killed"), env=ENV, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    after = _metrics(tmp_path / "killed")
    assert [r["step"] for r in after] == list(range(1, 13))  # redone steps replaced, none twice
    assert _strip(after) == _same(whole)
