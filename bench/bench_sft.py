"""An SFT step's forward and backward passes: rows of like length together against the shuffle's order.

    .venv/bin/python bench/bench_sft.py [--steps 4]  -> bench/results/sft.json

A micro-batch is padded to its longest row, and the calibration's SFT data (bench_bands.py's, committed
in bench/results/bands-sft-data/) holds rows of 154 to 3,072 tokens. The same steps of that data (the
seed-0 shuffle `egym sft` draws, batches of 8, micro-batches of 4) are timed both ways on SmolLM2 in
one process after an uncounted warm-up pass, alternating which goes first step by step so drift on
the machine hits both; no optimizer step is taken, so both see the same weights. Reported: padded
tokens, seconds, and the ratio like-length/shuffled.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.common import write  # noqa: E402
from trainer.model import load_policy  # noqa: E402
from trainer.sft import _batch_loss, _micro_batches, _sequences, load_sft_config  # noqa: E402

DATA = ROOT / "bench" / "results" / "bands-sft-data" / "data.jsonl.gz"
CONFIG = ROOT / "trainer" / "configs" / "sft-smollm2.yaml"


def in_order(batch: list, size: int) -> list[list]:
    """The passes as `egym sft` cut them before: the shuffle's order."""
    return [batch[i : i + size] for i in range(0, len(batch), size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="Even: each way goes first as often.")
    args = parser.parse_args()
    config = load_sft_config(CONFIG, [f"data={DATA.parent}"])
    torch.set_num_threads(config.threads or torch.get_num_threads())
    examples = [json.loads(line) for line in gzip.decompress(DATA.read_bytes()).decode().splitlines()]
    sequences = _sequences(examples, config.max_length)
    order = list(range(len(sequences)))
    random.Random(config.seed).shuffle(order)
    cpu = torch.device("cpu")
    model, tokenizer = load_policy(config.model, config.seed, cpu)
    model.train()
    like_length = functools.partial(_micro_batches, max_tokens=config.micro_batch_tokens)  # as egym sft cuts
    ways = {"shuffled": in_order, "like_length": like_length}
    figures = {name: {"seconds": 0.0, "padded_tokens": 0} for name in ways}
    size = config.micro_batch_size
    warm_up = sorted(sequences, key=lambda row: len(row[0]))[:size]  # a first pass pays for allocations
    _batch_loss(model, warm_up, tokenizer.pad_token_id, cpu)[0].backward()
    model.zero_grad(set_to_none=True)
    for step in range(args.steps):
        batch = [sequences[i] for i in order[step * config.batch_size : (step + 1) * config.batch_size]]
        for name in list(ways) if step % 2 == 0 else list(reversed(ways)):
            passes = ways[name](batch, size)
            started = time.perf_counter()
            for rows in passes:
                _batch_loss(model, rows, tokenizer.pad_token_id, cpu)[0].backward()
            model.zero_grad(set_to_none=True)
            figures[name]["seconds"] += time.perf_counter() - started
            figures[name]["padded_tokens"] += sum(
                max(len(ids) for ids, _ in rows) * len(rows) for rows in passes
            )
        print(f"step {step + 1}/{args.steps}: {json.dumps(figures)}", flush=True)
    write(
        "sft",
        {
            "model": config.model.path,
            "data": str(DATA.relative_to(ROOT)),
            "steps": args.steps,
            "batch_size": config.batch_size,
            "micro_batch_size": size,
            "real_tokens": sum(len(sequences[i][0]) for i in order[: args.steps * config.batch_size]),
            **{name: {k: round(v, 2) for k, v in f.items()} for name, f in figures.items()},
            "ratio_like_length_over_shuffled": {
                key: round(figures["like_length"][key] / figures["shuffled"][key], 3)
                for key in ("seconds", "padded_tokens")
            },
        },
    )


if __name__ == "__main__":
    main()
