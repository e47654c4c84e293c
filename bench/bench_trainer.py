"""Trainer speed on CPU next to TRL's GRPOTrainer: same tiny model, batch and lengths, same run.

Writes bench/results/trainer.json with, for each trainer, the median time per
step (sampling + update), the update alone where it can be separated, and
tokens per second; plus the ratios. Both trainers use: a fresh tiny Llama
(trainer.toy, seed 0), 4 prompts x 8 generations, completions of at most
16 tokens, temperature 1, one optimizer step per batch, no KL, float32,
learning rate 1e-6 (the policy stays near its start, so both sample similar
lengths),
torch threads = 1 (on 2 shared cores, two OpenMP threads stall
on each other and timings become noise).

    .venv/bin/python bench/bench_trainer.py [--steps 20]

`--model smollm2` instead times the update step alone on SmolLM2-135M-Instruct,
egym's Learner next to TRL's GRPOTrainer, each in its own process with its
peak RSS (bench/trainer_smollm2.py; writes bench/results/trainer-smollm2.json):

    .venv/bin/python bench/bench_trainer.py --model smollm2 [--steps 3] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

PROMPTS, GENERATIONS, MAX_NEW, WARMUP = 4, 8, 16, 2
RESULT = Path(__file__).parent / "results" / "trainer.json"


def _config(out: Path, steps: int):
    from trainer.config import build_config

    return build_config(
        {
            "seed": 0,
            "steps": steps,
            "output_dir": str(out),
            "model": {"builder": "toy"},
            "rollout": {"source": "toy", "group_size": GENERATIONS, "tasks_per_step": PROMPTS},
            "sampling": {"max_new_tokens": MAX_NEW, "temperature": 1.0},
            "optim": {"lr": 1e-6},
            "update": {"micro_batch_size": PROMPTS * GENERATIONS},
            "loss": {"kl_coef": 0.0},
            "checkpoint": {"interval": 0, "resume": "never"},
        }
    )


def bench_ours(steps: int) -> dict:
    from trainer.local import build_trainer

    with tempfile.TemporaryDirectory() as tmp:
        records = build_trainer(_config(Path(tmp), steps + WARMUP)).run()
    timed = [r for r in records[WARMUP:] if r["tokens_total"]]
    step_s = statistics.median(r["time_step"] for r in timed)
    update_s = statistics.median(r["time_update"] for r in timed)
    tokens = statistics.median(r["tokens_total"] for r in timed)
    completion = statistics.median(r["tokens_model"] for r in timed)
    return {
        "step_seconds": step_s,
        "update_seconds": update_s,
        "rollout_seconds": step_s - update_s,
        "tokens_per_step": tokens,
        "completion_tokens_per_step": completion,
        "tokens_per_second": tokens / step_s,
        "update_tokens_per_second": tokens / update_s,
        "steps_timed": len(timed),
    }


def bench_trl(steps: int) -> dict:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trainer.toy import WORDS, build_toy_model, grade

    model, tokenizer = build_toy_model(0)
    tokenizer.padding_side = "left"
    prompts = [f"<bos> repeat {w} :" for w in WORDS[:PROMPTS]]
    dataset = Dataset.from_dict(
        {"prompt": prompts * (steps + WARMUP) * 2, "word": WORDS[:PROMPTS] * (steps + WARMUP) * 2}
    )

    def reward(completions, word, **_):
        return [grade(w, c.split(), 3)[0] for c, w in zip(completions, word, strict=True)]

    times: list[float] = []
    tokens: list[int] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter() - self.t)

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "num_tokens" in logs:
                tokens.append(logs["num_tokens"])

    with tempfile.TemporaryDirectory() as tmp:
        args = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=PROMPTS * GENERATIONS,
            num_generations=GENERATIONS,
            max_completion_length=MAX_NEW,
            max_steps=steps + WARMUP,
            learning_rate=1e-6,
            beta=0.0,
            temperature=1.0,
            use_cpu=True,
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            gradient_accumulation_steps=1,
            shuffle_dataset=False,
            seed=0,
            bf16=False,
            disable_tqdm=True,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[Timer()],
        )
        trainer.train()
    step_s = statistics.median(times[WARMUP:])
    per_step = (tokens[-1] - tokens[WARMUP - 1]) / (len(tokens) - WARMUP) if len(tokens) > WARMUP else None
    return {
        "step_seconds": step_s,
        "tokens_per_step": per_step,
        "tokens_per_second": per_step / step_s if per_step else None,
        "steps_timed": len(times) - WARMUP,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["toy", "smollm2"], default="toy")
    parser.add_argument("--steps", type=int, default=None, help="timed steps (toy: 20, smollm2: 3)")
    parser.add_argument("--rounds", type=int, default=2, help="smollm2: processes per trainer, alternating")
    parser.add_argument("--gradient-checkpointing", action="store_true", help="smollm2: on for both trainers")
    parser.add_argument(
        "--batch", type=Path, help="smollm2: the sampled batch (JSON) to reuse, or where to keep it"
    )
    args = parser.parse_args()
    if args.model == "smollm2":
        sys.path.insert(
            0, str(Path(__file__).resolve().parent.parent)
        )  # run as a script: make `bench` importable
        from bench.trainer_smollm2 import main as bench_smollm2

        bench_smollm2(args.steps or 3, args.rounds, args.gradient_checkpointing, args.batch)
        return
    steps = args.steps or 20
    torch.set_num_threads(1)
    ours = bench_ours(steps)
    trl = bench_trl(steps)
    import trl as trl_pkg

    result = {
        "setup": {
            "model": "trainer.toy Llama (2 layers, hidden 32)",
            "prompts": PROMPTS,
            "generations": GENERATIONS,
            "max_new_tokens": MAX_NEW,
            "threads": torch.get_num_threads(),
            "trl": trl_pkg.__version__,
            "torch": torch.__version__,
            "machine": platform.machine(),
            "cpus": torch.get_num_threads(),
        },
        "egym": ours,
        "trl_grpo": trl,
        "ratio_step_time_trl_over_egym": trl["step_seconds"] / ours["step_seconds"],
        "ratio_tokens_per_second_egym_over_trl": (
            ours["tokens_per_second"] / trl["tokens_per_second"] if trl["tokens_per_second"] else None
        ),
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
