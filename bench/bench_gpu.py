"""The device check: the trainer and the engine on this machine's GPU, in one command of at most 8 minutes.

    make bench-gpu                       (or: python bench/bench_gpu.py [--small] [--out PATH])

Needs only torch, transformers and peft (plus egym's own pure-Python deps) and
no network: the models are random-weight Qwen2.5-0.5B and 1.5B shapes
(bench/gpu_models.py). On CUDA it writes bench/results/gpu.json with:

- toy: trainer/configs/toy.yaml through build_trainer (what `egym train` runs),
  mean reward over the first and last 10 steps;
- engine: 32 requests x 512-token random prompts x 256 new tokens (no end
  token, so exactly 256) on the 0.5B shape in bf16, plain `model.generate` then
  gym.models.engine.Engine on the same batch, each in tokens/s and as a share of
  the memory-bandwidth bound (peak bandwidths by device name in gpu_models.PEAKS);
- decode_step: one decoding step of that batch taken apart: the host's time to
  issue it against its wall time and the GPU's kernel time (and launches), then
  the same step replayed as a CUDA graph over a static KV cache;
- learner/<shape>/<full|lora>: Learner on 16 x 2,048-token sequences, bf16,
  gradient checkpointing: tokens/s, MFU against the device's dense bf16 peak,
  peak memory, and the share of trained elements one optimizer step changed;
- grpo_step: one whole step of toy.yaml with a 0.5B-shaped model (rollouts from
  the in-process engine, the update, the weight sync), the second of two timed.

Without CUDA, or with --small, the same parts run at tiny sizes in well under a
minute (tests/trainer/test_bench_gpu.py) and go to bench/results/gpu-small.json,
so `make bench` on a CPU never overwrites the GPU figures. The report is
rewritten after every part; a part that fails records its error and the next
one runs; a part that would not fit in what is left of the time budget is
skipped with a note. Goals are listed as the issue states them, not judged.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make `bench` and egym importable without an install

from bench.common import RESULTS, machine  # noqa: E402

GOALS = {
    "toy": "learns on CUDA as it does on the CPU (last-10 reward well above first-10)",
    "learner": "at least 40 % MFU on the 1.5B shape with float32 master weights",
    "engine": "at least 5x model.generate on the same batch, also shown as a share of the bandwidth bound",
}


@dataclass(frozen=True)
class Sizes:
    name: str
    toy_steps: int
    engine_model: str  # a shape in bench/gpu_models.py
    requests: int
    prompt_tokens: int
    new_tokens: int
    decode_steps: int
    learner_models: tuple[str, ...]
    sequences: int
    sequence_tokens: int
    micro_batch: int
    timed_updates: int
    grpo_model: str
    grpo_new_tokens: int


GPU = Sizes(
    name="gpu",
    toy_steps=100,  # toy.yaml's own: on the CPU it goes from about 0.1 to 1.0
    engine_model="QWEN_0_5B",
    requests=32,
    prompt_tokens=512,
    new_tokens=256,
    decode_steps=20,
    learner_models=("QWEN_0_5B", "QWEN_1_5B"),
    sequences=16,
    sequence_tokens=2048,
    micro_batch=4,  # the logits of 4 x 2,048 tokens over 151,936 words are the largest activation
    timed_updates=3,
    grpo_model="QWEN_0_5B_TOY_VOCAB",
    grpo_new_tokens=32,
)
SMALL = Sizes(
    name="small",
    toy_steps=40,
    engine_model="TINY",
    requests=4,
    prompt_tokens=32,
    new_tokens=16,
    decode_steps=4,
    learner_models=("TINY",),
    sequences=2,
    sequence_tokens=64,
    micro_batch=2,
    timed_updates=1,
    grpo_model="TINY_TOY_VOCAB",
    grpo_new_tokens=16,
)

# Seconds a part may take at GPU sizes on an H100 (estimated from the figures in issue 31, with room to
# spare): a part is skipped when less than that is left of the budget.
NEEDS = {"toy": 60, "engine": 90, "decode_step": 30, "learner": 50, "grpo_step": 40}
BUDGET_S = 420  # the whole run, imports included, within 8 minutes


@dataclass(frozen=True)
class Part:
    name: str
    need_s: float
    run: Callable[[dict[str, Any]], None]


def plan(sizes: Sizes, peak: Any) -> list[Part]:
    from bench import gpu_parts

    parts = [
        Part("toy", NEEDS["toy"], functools.partial(gpu_parts.toy, steps=sizes.toy_steps)),
        Part(
            "engine",
            NEEDS["engine"],
            functools.partial(
                gpu_parts.engine,
                model_name=sizes.engine_model,
                requests=sizes.requests,
                prompt=sizes.prompt_tokens,
                new=sizes.new_tokens,
                peak=peak,
            ),
        ),
        Part(
            "decode_step",
            NEEDS["decode_step"],
            functools.partial(
                gpu_parts.decode_step,
                model_name=sizes.engine_model,
                requests=sizes.requests,
                prompt=sizes.prompt_tokens,
                steps=sizes.decode_steps,
            ),
        ),
    ]
    for model in sizes.learner_models:
        for lora in (False, True):
            run = functools.partial(
                gpu_parts.learner,
                model_name=model,
                lora=lora,
                sequences=sizes.sequences,
                length=sizes.sequence_tokens,
                micro_batch=sizes.micro_batch,
                timed_updates=sizes.timed_updates,
                peak=peak,
            )
            parts.append(Part(f"learner/{model.lower()}/{'lora' if lora else 'full'}", NEEDS["learner"], run))
    grpo = functools.partial(
        gpu_parts.grpo_step, model_name=sizes.grpo_model, new_tokens=sizes.grpo_new_tokens
    )
    parts.append(Part("grpo_step", NEEDS["grpo_step"], grpo))
    return parts


def main(argv: list[str] | None = None) -> None:
    started = time.perf_counter()
    args = _arguments(argv)
    import torch

    from bench.gpu_models import device_peak

    sizes = SMALL if args.small or not torch.cuda.is_available() else GPU
    out = args.out or RESULTS / ("gpu.json" if sizes is GPU else "gpu-small.json")
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    peak_key, peak = device_peak(device)
    report: dict[str, Any] = {
        "machine": machine(),
        "device": device,
        "versions": _versions(),
        "sizes": asdict(sizes),
        "peak": {**asdict(peak), "table_entry": peak_key} if peak else None,
        "budget_s": args.budget,
        "goals": GOALS,
        "parts": {},
    }
    print(f"bench-gpu on {device}, {sizes.name} sizes, budget {args.budget:.0f} s -> {out}", flush=True)
    for part in plan(sizes, peak):
        left = args.budget - (time.perf_counter() - started)
        result: dict[str, Any] = {}
        report["parts"][part.name] = result
        if left < part.need_s:
            result["skipped"] = f"{left:.0f} s of the budget left, the part may need {part.need_s:.0f} s"
            print(f"{part.name}: skipped ({result['skipped']})", flush=True)
        else:
            _run(part, result)
        report["elapsed_s"] = round(time.perf_counter() - started, 1)
        _write(out, report)
    print(f"done in {report['elapsed_s']:.0f} s; wrote {out}", flush=True)


def _run(part: Part, result: dict[str, Any]) -> None:
    from bench.gpu_parts import reset_peak_memory

    began = time.perf_counter()
    try:
        part.run(result)
    except Exception as exc:  # noqa: BLE001 - a broken part is recorded and the next one still runs
        traceback.print_exc()
        result["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        print(f"{part.name}: failed ({result['error']})", flush=True)
    result["part_seconds"] = round(time.perf_counter() - began, 1)
    reset_peak_memory()  # free this part's models before the next


def _write(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("torch", "transformers", "peft"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "missing"
    return found


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes (automatic without CUDA)")
    parser.add_argument(
        "--out", type=Path, help="report path (default bench/results/gpu.json, gpu-small.json)"
    )
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for the whole run")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
