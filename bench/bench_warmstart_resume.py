"""Resume after kill -9 with SmolLM2 through real sandboxes: the next step's loss equals an uninterrupted run's.

    .venv/bin/python bench/bench_warmstart_resume.py [--model .egym/bench-warmstart/sft/model]
        -> bench/results/warmstart-resume.json

Two `egym train trainer/configs/gym-cpu.yaml` runs of 2 steps (full fine-tune, 2 tasks x 4 rollouts,
a checkpoint after every step): one uninterrupted; the other killed with SIGKILL while its step 2
runs, then started again with the same command, which resumes from the step-1 checkpoint. The
default model is the SFT model of bench_warmstart.py (`make bench` runs that one just before):
the bundled SmolLM2 never earns a reward, so its groups would carry no signal and step 2 would
update nothing. The toy-model version of this check runs in the suite
(tests/trainer/test_resume_after_kill.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import write  # noqa: E402
from gym.dashboard.metrics import read_metrics  # noqa: E402

WORK = ROOT / ".egym" / "bench-resume"
EGYM = str(ROOT / ".venv" / "bin" / "egym")
ENV = {**os.environ, "EGYM_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}  # one thread: sums in one order
COMPARED = ("loss", "reward_mean", "pass_rate", "grad_norm", "tokens_total")
# Not bitwise here (the toy test is): most likely the sampler, which batches concurrent rollouts as
# they come, scores the same tokens in other batch shapes, so float sums come out in another order.
TOLERANCE = 1e-5


def command(model: str, out: Path) -> list[str]:
    return [
        EGYM,
        "train",
        "trainer/configs/gym-cpu.yaml",
        f"model.path={model}",
        "model.lora.enabled=false",
        "tasks.paths=[acme/product-price@0-49,acme/employee-title@0-49,acme/invoice-status@0-49]",
        "tasks.include=['*-l0-*']",
        "rollout.group_size=4",
        "rollout.tasks_per_step=2",
        "rollout.resample_rounds=2",
        "rollout.options.call_reward=0.1",  # a group whose rewards differ, so step 2 updates the model
        "steps=2",
        "checkpoint.interval=1",
        f"output_dir={out}",
    ]


def relative_difference(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return abs(a - b) / max(abs(a), abs(b)) if a != b else 0.0


def metrics(out: Path) -> list[dict]:
    """The run's steps in order (a line cut off by the kill is skipped, a resumed step's later line wins)."""
    path = out / "metrics.jsonl"
    return [step.model_dump() for step in read_metrics(path).steps] if path.is_file() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / ".egym" / "bench-warmstart" / "sft" / "model"))
    parser.add_argument("--kill-after", type=float, default=30.0, help="Seconds into step 2 to kill.")
    args = parser.parse_args()
    if not Path(args.model).is_dir() and args.model != "smollm2":
        sys.exit(f"error: no model folder {args.model}: run bench/bench_warmstart.py first, or pass --model")
    whole, killed = WORK / "whole", WORK / "killed"
    for out in (whole, killed):
        shutil.rmtree(out, ignore_errors=True)

    started = time.perf_counter()
    subprocess.run(command(args.model, whole), cwd=ROOT, env=ENV, check=True)
    whole_s = time.perf_counter() - started

    started = time.perf_counter()
    run = subprocess.Popen(command(args.model, killed), cwd=ROOT, env=ENV)
    while not (killed / "checkpoints" / "step-000001").is_dir() and run.poll() is None:
        time.sleep(0.5)
    time.sleep(args.kill_after)  # well inside step 2: its rollouts take minutes
    run.send_signal(signal.SIGKILL)
    run.wait()
    steps_at_kill = [r["step"] for r in metrics(killed)]
    subprocess.run(command(args.model, killed), cwd=ROOT, env=ENV, check=True)
    killed_s = time.perf_counter() - started

    a, b = metrics(whole)[-1], metrics(killed)[-1]
    difference = {key: relative_difference(a.get(key), b.get(key)) for key in COMPARED}
    write(
        "warmstart-resume",
        {
            "model": args.model,
            "command": " ".join(command(args.model, Path("OUT"))[1:]),
            "killed": f"SIGKILL {args.kill_after:.0f} s after the step-1 checkpoint appeared",
            "steps_logged_when_killed": steps_at_kill,
            "exit_code_when_killed": run.returncode,
            "step_2_uninterrupted": {key: a.get(key) for key in COMPARED},
            "step_2_resumed": {key: b.get(key) for key in COMPARED},
            "relative_difference": difference,
            "bitwise_equal": all(d == 0.0 for d in difference.values()),
            f"equal_within_{TOLERANCE:g}": all(d is not None and d <= TOLERANCE for d in difference.values()),
            "seconds": {"uninterrupted": round(whole_s, 1), "killed_and_resumed": round(killed_s, 1)},
        },
    )


if __name__ == "__main__":
    main()
