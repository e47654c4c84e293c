"""The GRPO update step on SmolLM2-135M-Instruct: egym's Learner next to TRL's GRPOTrainer.

`bench/bench_trainer.py --model smollm2` runs this. One batch is sampled once
(egym's hf sampler, temperature 1): 2 level-0 task prompts (`acme/product-price`
seeds 0 and 1, system prompt + tool list rendered as the hf policy renders them)
x 4 completions of at most 64 tokens, reward 1 if the completion holds a digit
(seeds are tried until every group has reward variance, so no advantage is zero).
Both trainers then train on exactly those token ids, each in its own process,
one after the other, so each one's peak RSS (VmHWM) is its own:

- egym: `Learner.update` on the batch's TrainItems (forward, backward, AdamW step);
- TRL: `GRPOTrainer` steps whose generation is a `rollout_func` handing back the
  same completions; its update is the step minus `_generate_and_score_completions`
  (lookup, reward, advantages; no old-logprob pass with one step per batch).

Same settings on both: full fine-tune, float32, AdamW lr 1e-6, no KL,
gradient clipping at 1.0, one optimizer step per batch, the whole batch in one
forward, gradient checkpointing off (egym's default; `--gradient-checkpointing`
turns it on for both), torch threads = 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROMPTS, GENERATIONS, MAX_NEW, WARMUP, THREADS, LR = 2, 4, 64, 1, 2, 1e-6
FAMILY, SEEDS = "acme/product-price", (0, 1)
RESULT = Path(__file__).parent / "results" / "trainer-smollm2.json"


def _peak_rss_gb() -> float:
    """This process's peak resident set (VmHWM: per address space, so a child's own)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    raise RuntimeError("no VmHWM in /proc/self/status")


def _egym_config(out: str, gradient_checkpointing: bool):
    from trainer.config import build_config

    return build_config(
        {
            "seed": 0,
            "steps": 1,
            "output_dir": out,
            "model": {
                "path": "smollm2",
                "dtype": "float32",
                "gradient_checkpointing": gradient_checkpointing,
            },
            "rollout": {"source": "toy", "group_size": GENERATIONS, "tasks_per_step": PROMPTS},
            "sampling": {"max_new_tokens": MAX_NEW, "temperature": 1.0},
            "optim": {"lr": LR, "max_grad_norm": 1.0},
            "update": {"micro_batch_size": PROMPTS * GENERATIONS},
            "loss": {"kl_coef": 0.0},
            "checkpoint": {"interval": 0, "resume": "never"},
        }
    )


def _reward(text: str) -> float:
    return float(any(ch.isdigit() for ch in text))


# -- the shared batch ---------------------------------------------------


def prompt_ids(tokenizer) -> list[list[int]]:
    """Level-0 task prompts as the hf policy renders them (system prompt, built-in tool list, task)."""
    from core.trajectory import Message
    from gym.harness.builtin_tools import BUILTIN_TOOLS
    from gym.harness.prompt import system_prompt
    from gym.policies.chat_render import render_prompt_ids
    from gym.task_refs import resolve
    from gym.tasks import world_of

    out = []
    for task in resolve([FAMILY], seeds=",".join(map(str, SEEDS)), levels="0")[:PROMPTS]:
        messages = [
            Message(role="system", content=system_prompt(task, world_of(task))),
            Message(role="user", content=task.prompt),
        ]
        out.append(render_prompt_ids(tokenizer, messages, [s.schema() for s in BUILTIN_TOOLS.values()]))
    return out


def sample_batch(path: Path) -> None:
    """Sample the batch once with egym's hf sampler; keep the first seed whose groups all have reward variance."""
    import torch

    from trainer.model import load_policy
    from trainer.samplers.base import Request
    from trainer.samplers.hf import HFSampler

    torch.set_num_threads(THREADS)
    with tempfile.TemporaryDirectory() as tmp:
        config = _egym_config(tmp, False)
    model, tokenizer = load_policy(config.model, 0)
    sampler = HFSampler(model, tokenizer)
    prompts = prompt_ids(tokenizer)
    for seed in range(20):
        requests = [Request(ids, n=GENERATIONS, seed=seed * 100 + i) for i, ids in enumerate(prompts)]
        groups = sampler.generate(requests, config.sampling)
        rewards = [[_reward(tokenizer.decode(c.token_ids)) for c in group] for group in groups]
        if all(len(set(r)) > 1 for r in rewards):
            break
    else:
        raise SystemExit("no seed in 0-19 gave reward variance in every group")
    batch = {
        "seed": seed,
        "prompts": [
            {
                "prompt_ids": ids,
                "completions": [
                    {"token_ids": c.token_ids, "logprobs": c.logprobs, "reward": r}
                    for c, r in zip(group, group_rewards, strict=True)
                ],
            }
            for ids, group, group_rewards in zip(prompts, groups, rewards, strict=True)
        ],
    }
    path.write_text(json.dumps(batch))


def _batch_tokens(batch: dict) -> dict:
    seqs = [(len(p["prompt_ids"]), len(c["token_ids"])) for p in batch["prompts"] for c in p["completions"]]
    return {
        "sequences": len(seqs),
        "prompt_tokens": sum(p for p, _ in seqs),
        "completion_tokens": sum(c for _, c in seqs),
        "tokens": sum(p + c for p, c in seqs),
        "longest_sequence": max(p + c for p, c in seqs),
        "rewards": [c["reward"] for p in batch["prompts"] for c in p["completions"]],
    }


# -- the two trainers, each run in its own process ----------------------


def run_egym(batch: dict, steps: int, gradient_checkpointing: bool) -> dict:
    import torch

    from trainer.advantages import group_advantages
    from trainer.learner import Learner
    from trainer.model import load_policy
    from trainer.samples import Sample, TrainItem

    with tempfile.TemporaryDirectory() as tmp:
        config = _egym_config(tmp, gradient_checkpointing)
    model, tokenizer = load_policy(config.model, 0)
    learner = Learner(config, model, tokenizer)
    items, trajectory = [], 0
    for prompt in batch["prompts"]:
        advantages = group_advantages([c["reward"] for c in prompt["completions"]])
        for completion, adv in zip(prompt["completions"], advantages, strict=True):
            sample = Sample.from_turn(prompt["prompt_ids"], completion["token_ids"], completion["logprobs"])
            items.append(TrainItem(sample, adv, trajectory))
            trajectory += 1
    times = []
    for _ in range(WARMUP + steps):
        times.append(learner.update(items)["time_update"])
    return {
        "update_seconds_all": times[WARMUP:],
        "warmup_seconds": times[:WARMUP],
        "optimizer": f"torch.optim.AdamW (foreach={learner.optimizer.defaults.get('foreach')}, fused={learner.optimizer.defaults.get('fused')})",
        "torch_threads": torch.get_num_threads(),
    }


def run_trl(batch: dict, steps: int, gradient_checkpointing: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trainer.model import model_source

    source = model_source("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32)
    keys = [f"prompt-{i}" for i in range(len(batch["prompts"]))]
    served = dict.fromkeys(keys, 0)

    def rollout(prompts, trainer):
        """The pre-sampled completions, in order, for each prompt key TRL asks for."""
        out = {"prompt_ids": [], "completion_ids": [], "logprobs": []}
        for key in prompts:
            prompt = batch["prompts"][keys.index(key)]
            completion = prompt["completions"][served[key] % GENERATIONS]
            served[key] += 1
            out["prompt_ids"].append(prompt["prompt_ids"])
            out["completion_ids"].append(completion["token_ids"])
            out["logprobs"].append(completion["logprobs"])
        return out

    def reward(completions, **_):
        return [_reward(c) for c in completions]

    steps_s: list[float] = []
    scoring_s: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            steps_s.append(time.perf_counter() - self.t)

    total = WARMUP + steps
    dataset = Dataset.from_dict({"prompt": keys * total * 2})
    with tempfile.TemporaryDirectory() as tmp:
        args = GRPOConfig(
            output_dir=tmp,
            per_device_train_batch_size=PROMPTS * GENERATIONS,
            num_generations=GENERATIONS,
            max_completion_length=MAX_NEW,
            max_steps=total,
            learning_rate=LR,
            max_grad_norm=1.0,
            beta=0.0,
            temperature=1.0,
            gradient_checkpointing=gradient_checkpointing,
            gradient_accumulation_steps=1,
            use_cpu=True,
            bf16=False,
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            shuffle_dataset=False,
            seed=0,
            disable_tqdm=True,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            rollout_func=rollout,
            callbacks=[Timer()],
        )
        score = trainer._generate_and_score_completions

        def timed_score(inputs):
            started = time.perf_counter()
            try:
                return score(inputs)
            finally:
                scoring_s.append(time.perf_counter() - started)

        trainer._generate_and_score_completions = timed_score
        trainer.train()
    if len(steps_s) != total or len(scoring_s) != total:
        raise RuntimeError(
            f"expected {total} steps, timed {len(steps_s)} steps and {len(scoring_s)} scorings"
        )
    updates = [s - g for s, g in zip(steps_s, scoring_s, strict=True)]
    return {
        "update_seconds_all": updates[WARMUP:],
        "warmup_seconds": updates[:WARMUP],
        "step_seconds_all": steps_s[WARMUP:],
        "scoring_seconds_all": scoring_s[WARMUP:],
        "optimizer": str(args.optim),
        "loss_type": args.loss_type,
        "torch_threads": torch.get_num_threads(),
    }


def child(role: str, batch_path: Path, out: Path, steps: int, gradient_checkpointing: bool) -> None:
    import torch

    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    batch = json.loads(batch_path.read_text())
    run = {"egym": run_egym, "trl": run_trl}[role]
    result = run(batch, steps, gradient_checkpointing)
    result["peak_rss_gb"] = _peak_rss_gb()
    out.write_text(json.dumps(result))


# -- the driver ---------------------------------------------------------


class LoadSampler:
    """The 1-minute load average every few seconds while the trainers run (other jobs share the machine)."""

    def __init__(self, every: float = 5.0):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)

    def _run(self, every: float) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(every)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": min(s), "median": statistics.median(s), "max": max(s), "samples": len(s)}


def _spawn(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "bench.trainer_smollm2", *args]
    subprocess.run(cmd, check=True, cwd=Path(__file__).resolve().parent.parent)


def _summarise(runs: list[dict], tokens: int) -> dict:
    updates = [t for run in runs for t in run["update_seconds_all"]]
    median = statistics.median(updates)
    out = {
        "update_seconds_median": median,
        "update_seconds_min": min(updates),
        "update_seconds_all": updates,
        "tokens_per_update": tokens,
        "tokens_per_second": tokens / median,
        "peak_rss_gb": max(run["peak_rss_gb"] for run in runs),
        "steps_timed": len(updates),
        "optimizer": runs[0]["optimizer"],
        "torch_threads": runs[0]["torch_threads"],
        "load_average_1min": [run["load"] for run in runs],
    }
    if "step_seconds_all" in runs[0]:
        out["step_seconds_median"] = statistics.median(t for run in runs for t in run["step_seconds_all"])
        out["scoring_seconds_median"] = statistics.median(
            t for run in runs for t in run["scoring_seconds_all"]
        )
        out["loss_type"] = runs[0]["loss_type"]
    return out


def main(steps: int, rounds: int, gradient_checkpointing: bool, batch_file: Path | None = None) -> dict:
    """`batch_file`: a batch sampled by an earlier run (`sample` stage), reused as is; else one is sampled."""
    import torch
    import transformers
    import trl

    from bench.common import machine

    gc = ["--gradient-checkpointing"] if gradient_checkpointing else []
    runs: dict[str, list[dict]] = {"egym": [], "trl": []}
    with tempfile.TemporaryDirectory() as tmp, LoadSampler() as load:
        batch_path = batch_file or Path(tmp) / "batch.json"
        if not batch_path.exists():
            print("sampling the batch", flush=True)
            _spawn(["sample", "--batch", str(batch_path)])
        for r in range(rounds):
            order = (
                ["egym", "trl"] if r % 2 == 0 else ["trl", "egym"]
            )  # alternate, so drift in load hits both
            for role in order:
                out = Path(tmp) / f"{role}-{r}.json"
                print(f"round {r + 1}/{rounds}: {role}", flush=True)
                before = len(load.samples)
                _spawn([role, "--batch", str(batch_path), "--out", str(out), "--steps", str(steps), *gc])
                run = json.loads(out.read_text())
                window = load.samples[before:] or [os.getloadavg()[0]]
                run["load"] = statistics.median(window)
                runs[role].append(run)
        batch = json.loads(batch_path.read_text())
    tokens = _batch_tokens(batch)
    egym, trl_result = (_summarise(runs[k], tokens["tokens"]) for k in ("egym", "trl"))
    result = {
        "machine": machine(),
        "setup": {
            "model": "SmolLM2-135M-Instruct (.egym/models), full fine-tune, float32",
            "batch": f"{PROMPTS} prompts x {GENERATIONS} completions, sampled once (seed {batch['seed']}), "
            f"the same token ids for both trainers",
            "prompts": f"{FAMILY} level 0, seeds {list(SEEDS)}: system prompt + built-in tool list + task, "
            "rendered by egym's hf chat rendering",
            "max_new_tokens": MAX_NEW,
            **tokens,
            "reward": "1 if the completion contains a digit, else 0",
            "optimizer": f"AdamW lr {LR}, max_grad_norm 1.0, one optimizer step per batch",
            "kl": "none (egym kl_coef 0, TRL beta 0)",
            "micro_batch": f"{PROMPTS * GENERATIONS} sequences in one forward on both",
            "gradient_checkpointing": gradient_checkpointing,
            "torch_threads": THREADS,
            "timed": f"{WARMUP} warm-up + {steps} timed updates per process, {rounds} process(es) per trainer, "
            "alternating",
            "egym_update": "Learner.update (forward, backward, clip, AdamW step)",
            "trl_update": "GRPOTrainer step (on_step_begin..on_step_end) minus _generate_and_score_completions "
            "(rollout_func lookup, reward, advantages)",
            "peak_rss": "VmHWM of each trainer's own process (model load included)",
            "versions": {
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "trl": trl.__version__,
            },
        },
        "egym": egym,
        "trl_grpo": trl_result,
        "ratio_update_time_egym_over_trl": egym["update_seconds_median"]
        / trl_result["update_seconds_median"],
        "ratio_peak_rss_egym_over_trl": egym["peak_rss_gb"] / trl_result["peak_rss_gb"],
        "load_average_1min": load.summary(),
        "goal": "egym update time <= 1.0x TRL's; peak RSS <= 6 GB",
    }
    result["goal_met"] = {
        "time": result["ratio_update_time_egym_over_trl"] <= 1.0,
        "rss": egym["peak_rss_gb"] <= 6.0,
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


def _cli() -> None:
    parser = argparse.ArgumentParser(description="internal: one stage of the SmolLM2 update bench")
    parser.add_argument("role", choices=["sample", "egym", "trl"])
    parser.add_argument("--batch", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--gradient-checkpointing", action="store_true")
    a = parser.parse_args()
    if a.role == "sample":
        sample_batch(a.batch)
    else:
        child(a.role, a.batch, a.out, a.steps, a.gradient_checkpointing)


if __name__ == "__main__":
    _cli()
