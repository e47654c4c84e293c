"""bench/bench_gpu.py, the device check, runs end to end at its small sizes and reports sane figures.

It runs as a command (`python bench/bench_gpu.py --small`), as it will on a GPU
machine, into a temporary report; on this CPU every part must finish without
error, so the one GPU run it is prepared for is not the first time a part runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # about 20 s on two busy cores
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "EGYM_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("bench-gpu") / "gpu.json"
    command = [sys.executable, "bench/bench_gpu.py", "--small", "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_every_part_ran_without_error(report):
    assert report["device"]
    assert report["sizes"]["name"] == "small"
    assert set(report["parts"]) == {
        "toy",
        "engine",
        "decode_step",
        "learner/tiny/full",
        "learner/tiny/lora",
        "grpo_step",
    }
    for name, part in report["parts"].items():
        assert "error" not in part and "skipped" not in part, (name, part)
    assert set(report["goals"]) == {"toy", "learner", "engine"}


def test_toy_rewards_are_reported(report):
    toy = report["parts"]["toy"]
    assert toy["steps"] == report["sizes"]["toy_steps"] == len(toy["rewards"])
    assert 0 <= toy["reward_first_10"] <= 1 and 0 <= toy["reward_last_10"] <= 1


def test_engine_and_generate_make_every_token(report):
    engine = report["parts"]["engine"]
    sizes = report["sizes"]
    wanted = sizes["requests"] * sizes["new_tokens"]
    for way in ("generate", "engine"):
        assert engine[way]["tokens"] == wanted, way  # no end token: every request runs to the end
        assert engine[way]["tokens_per_s"] > 0
    assert engine["engine"]["shortest"] == sizes["new_tokens"]
    assert engine["engine_over_generate"] > 0
    if report["peak"] is None:  # the CPU has no bandwidth in the table
        assert (
            engine["bandwidth_bound_tokens_per_s"] is None
            and report["parts"]["learner/tiny/full"]["mfu"] is None
        )


def test_a_decoding_step_is_taken_apart(report):
    step = report["parts"]["decode_step"]
    assert step["steps"] == report["sizes"]["decode_steps"]
    assert 0 < step["eager"]["issue_ms"] <= step["eager"]["wall_ms"]
    if report["device"] == "cpu":  # kernel times and CUDA graphs exist only on CUDA
        assert "kernel_ms" not in step["eager"] and "graph_wall_ms" not in step


@pytest.mark.parametrize("mode", ["full", "lora"])
def test_learner_steps_change_the_trained_weights(report, mode):
    run = report["parts"][f"learner/tiny/{mode}"]
    assert run["tokens_per_s"] > 0 and run["peak_memory_gb"] > 0
    assert 0 < run["changed_share"] <= 1
    assert 0 < run["trained_elements"] <= run["params"]


def test_one_grpo_step_is_timed(report):
    step = report["parts"]["grpo_step"]["step"]
    assert step["time_step"] > 0 and step["time_rollout"] > 0
    assert step["groups_kept"] > 0 and step["time_update"] > 0
