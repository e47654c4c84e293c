"""bench/bench_learning_throughput.py runs end to end in its smoke mode and reports what each setting did.

It runs as the command the measurement will be (`--smoke`: two instances, groups of two, one turn of
at most 8 tokens, through real sandboxes and the bundled model) into a temporary report. Timings are
not checked: only that both settings ran the same rollouts, each with its own prompt and limits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.model, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "EGYM_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def report(tmp_path_factory, docker_image) -> dict:
    out = tmp_path_factory.mktemp("bench-throughput") / "throughput.json"
    command = [sys.executable, "bench/bench_learning_throughput.py", "--smoke", "--model", "smollm2"]
    done = subprocess.run(
        [*command, "--out", str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "round 1/1 before" in done.stdout and "round 1/1 after" in done.stdout  # progress is shown
    return json.loads(out.read_text())


def test_both_settings_play_the_same_instances_with_their_own_prompt_and_limits(report):
    assert report["complete"] and report["smoke"] and len(report["instances"]) == 2
    before, after = report["settings"]["before"], report["settings"]["after"]
    assert (before["concurrency"], after["concurrency"]) == (2, 2)
    assert "prompt" not in before["harness"] and after["harness"]["prompt"] == "compact"
    assert after["harness"]["limits_by_level"] == {"0": {"max_turns": 1, "max_new_tokens": 8}}
    for name in ("before", "after"):
        (run,) = report["runs"][name]
        assert run["tasks"] == report["instances"] and run["seconds"] > 0
        rows = run["rollouts"]
        assert len(rows) == report[name]["rollouts"] == 4, rows  # 2 instances x groups of 2
        assert all(r["error"] is None and r["turns"] == 1 and r["completion_tokens"] <= 8 for r in rows), rows
        assert report[name]["rollouts_per_min"] > 0
    # the compact prompt is what the model read: far fewer prompt tokens a turn
    assert report["after"]["prompt_tokens_per_turn"] < 0.7 * report["before"]["prompt_tokens_per_turn"]


def test_the_ratios_are_after_over_before(report):
    ratio = report["ratio_after_over_before"]
    for key in ("rollouts_per_min", "generated_tokens_per_s"):
        if report["before"][key] and report["after"][key]:
            assert ratio[key] == pytest.approx(report["after"][key] / report["before"][key], abs=1e-3)
