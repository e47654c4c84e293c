"""Supervised fine-tuning on `egym sft-data` examples: masked cross-entropy on the completions only.

    egym sft trainer/configs/sft-smollm2.yaml data=.egym/sft/l0 output_dir=runs/sft-l0

Plain torch, not TRL's SFTTrainer: the examples are already token ids exactly as the policy
sees them (prompt and completion rendered by gym.policies.chat_render), so the loop is a few
lines, has no tokenisation step that could drift from the policy's, and shares the model
loading (full or LoRA) with the GRPO learner. The result is an ordinary transformers folder
(`<output_dir>/model`, a LoRA adapter merged in) that every policy loads and that `egym train`
starts from with `model.path=<output_dir>/model`. A run saves a checkpoint every `checkpoint_every`
steps and a rerun of the same config goes on from the newest, to the same weights as an
uninterrupted run (the shuffles are drawn again and the finished batches skipped).
"""

from __future__ import annotations

import json
import math
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from pydantic import Field, ValidationError

from core.errors import ConfigError
from core.overrides import apply_overrides, read_yaml
from core.validation import describe_validation_error
from gym.harness.prompt import PromptStyle
from gym.models.device import best_device, computing
from trainer.checkpoint import find_resume, load_checkpoint, save_checkpoint
from trainer.config import ModelConfig, _Section

CHECKPOINTS = "checkpoints"


class SFTConfig(_Section):
    """Everything `egym sft` needs."""

    seed: int = Field(0, description="Seeds the shuffling and the initialisation of a LoRA adapter.")
    data: str = Field(description="Dataset folder written by `egym sft-data`.")
    prompt: PromptStyle = Field(
        "full",
        description="The harness prompt setting (harness.prompt) the model will be trained and evaluated "
        "with; data made with another setting is refused.",
    )
    output_dir: str = Field(
        "runs/sft", description="metrics.jsonl and the fine-tuned model (model/) go here."
    )
    model: ModelConfig
    epochs: int = Field(3, ge=1, le=1000, description="Passes over the examples.")
    lr: float = Field(5e-5, gt=0, le=1, description="Peak learning rate (AdamW), after a linear warm-up.")
    warmup: float = Field(0.1, ge=0, le=1, description="Share of the steps spent warming up.")
    weight_decay: float = Field(0.0, ge=0, le=1)
    batch_size: int = Field(8, ge=1, le=4096, description="Examples per optimizer step.")
    micro_batch_size: int = Field(4, ge=1, le=4096, description="Examples per forward pass.")
    micro_batch_tokens: int | None = Field(
        None,
        ge=16,
        description="At most this many tokens in a forward pass, padding included: the passes holding long rows "
        "take fewer of them (a row longer than this goes alone). The activations of a pass grow with it. "
        "None: micro_batch_size rows whatever their length.",
    )
    max_length: int = Field(
        4096, ge=16, le=1_000_000, description="Longest prompt + completion; longer prompts lose their start."
    )
    max_grad_norm: float = Field(1.0, gt=0)
    threads: int | None = Field(None, ge=1, le=1024, description="torch CPU threads (default: torch's).")
    checkpoint_every: int = Field(
        10,
        ge=0,
        description="Steps between checkpoints (weights, optimizer, step) in <output_dir>/checkpoints; a rerun "
        "of the same config goes on from the newest, to the same weights. Removed once the model is "
        "written. 0: none.",
    )


def load_sft_config(path: str | Path, overrides: list[str] | None = None) -> SFTConfig:
    data = apply_overrides(read_yaml(path), overrides or [])
    try:
        return SFTConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {describe_validation_error(exc, model=SFTConfig)}") from None


def _sequences(examples: list[dict[str, Any]], max_length: int) -> list[tuple[list[int], int]]:
    """(token ids, where the completion starts) per example; a long prompt loses its oldest tokens."""
    out = []
    for example in examples:
        prompt, completion = example["prompt_ids"], example["completion_ids"]
        if not completion:
            continue
        keep = max(0, max_length - len(completion))
        prompt = prompt[len(prompt) - keep :] if keep else []
        out.append(((prompt + completion)[-max_length:], min(len(prompt), max_length - 1)))
    return out


def _batch_loss(
    model: Any, batch: list[tuple[list[int], int]], pad: int, device: torch.device
) -> tuple[torch.Tensor, int]:
    """Summed cross-entropy over the completion tokens of `batch`, and how many there were.

    Rows are padded on the left so every completion ends at the last position; the model then
    projects onto the vocabulary only the last positions that hold completion tokens
    (`logits_to_keep`): a level-0 prompt is ~900 tokens, its completion ~50, and the vocabulary
    projection of the prompt positions would be most of the memory and a fifth of the compute.
    """
    width = max(len(ids) for ids, _ in batch)
    keep = max(len(ids) - start for ids, start in batch)
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids, _ in batch], device=device)
    labels = torch.tensor(
        [[-100] * (width - len(ids) + start) + ids[start:] for ids, start in batch], device=device
    )
    attention = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in batch], device=device)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    with computing(model):
        logits = model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, logits_to_keep=keep + 1
        ).logits[:, :-1]  # positions width-keep-1 .. width-2 predict the last `keep` tokens
    targets = labels[:, width - keep :]
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-100, reduction="sum"
    )
    return loss, int((targets != -100).sum())


def _micro_batches(
    batch: list[tuple[list[int], int]], size: int, max_tokens: int | None = None
) -> list[list[tuple[list[int], int]]]:
    """The step's rows in forward passes of at most `size` rows and `max_tokens` padded tokens, rows of
    like length together: a pass is padded to its longest row, and a step's rows run 150 to 3,000
    tokens (the step's gradient is the same sum)."""
    passes: list[list[tuple[list[int], int]]] = []
    for row in sorted(batch, key=lambda row: len(row[0])):
        last = passes[-1] if passes else []
        fits = max_tokens is None or (len(last) + 1) * len(row[0]) <= max_tokens  # row: the longest yet
        if last and len(last) < size and fits:
            last.append(row)
        else:
            passes.append([row])
    return passes


def run_sft(
    config: SFTConfig, on_step: Callable[[dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """Fine-tune, write metrics.jsonl and `<output_dir>/model`; returns every step's record."""
    from gym.sft import read_dataset
    from trainer.model import load_policy

    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    device = best_device()
    model, tokenizer = load_policy(config.model, config.seed, device)
    examples = read_dataset(Path(config.data), tokenizer, config.prompt)
    sequences = _sequences(examples, config.max_length)
    if not sequences:
        raise ConfigError(f"{config.data}: no examples to train on")
    steps_per_epoch = math.ceil(len(sequences) / config.batch_size)
    total = steps_per_epoch * config.epochs
    warmup = max(1, round(total * config.warmup))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total)))
    )
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config.model_dump(mode="json"), indent=1) + "\n")
    step = _resume(config, model, optimizer, schedule)
    records = [r for r in _read_records(out / "metrics.jsonl") if r["step"] <= step]
    rng = random.Random(config.seed)
    model.train()
    with (out / "metrics.jsonl").open("w") as metrics:
        metrics.writelines(json.dumps(record) + "\n" for record in records)
        for epoch in range(config.epochs):
            order = list(range(len(sequences)))
            rng.shuffle(order)  # every epoch's order is drawn, so a resumed run skips the same batches
            for first in range(0, len(order), config.batch_size):
                if epoch * steps_per_epoch + first // config.batch_size < step:
                    continue
                started = time.perf_counter()
                chosen = [sequences[i] for i in order[first : first + config.batch_size]]
                tokens = sum(len(ids) - start for ids, start in chosen)
                optimizer.zero_grad(set_to_none=True)
                total_loss = 0.0
                for micro in _micro_batches(chosen, config.micro_batch_size, config.micro_batch_tokens):
                    loss, _ = _batch_loss(model, micro, tokenizer.pad_token_id, device)
                    (loss / tokens).backward()
                    total_loss += float(loss.detach())
                grad_norm = float(torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm))
                optimizer.step()
                schedule.step()
                step += 1
                seconds = time.perf_counter() - started
                record = {
                    "step": step,
                    "epoch": epoch + 1,
                    "loss": total_loss / tokens,
                    "grad_norm": grad_norm,
                    "lr": optimizer.param_groups[0]["lr"],
                    "examples": len(chosen),
                    "tokens": tokens,
                    "time_step": seconds,
                    "tokens_per_s": sum(len(ids) for ids, _ in chosen) / seconds,
                    "steps_total": total,
                }
                metrics.write(json.dumps(record) + "\n")
                metrics.flush()
                records.append(record)
                if config.checkpoint_every and step % config.checkpoint_every == 0 and step < total:
                    save_checkpoint(
                        out / CHECKPOINTS,
                        step,
                        model=model,
                        tokenizer=tokenizer,
                        learner_state={
                            "optimizer": optimizer.state_dict(),
                            "scheduler": schedule.state_dict(),
                        },
                        state={"config": _resume_key(config)},
                        keep=1,
                    )
                if on_step is not None:
                    on_step(record)
    _save(model, tokenizer, out / "model")
    shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    return records


def _resume_key(config: SFTConfig) -> dict[str, Any]:
    """What a checkpoint must share with the run that goes on from it (not the threads or the interval)."""
    return config.model_dump(mode="json", exclude={"threads", "checkpoint_every"})


def resume_point(config: SFTConfig) -> Path | None:
    """The checkpoint a run of `config` goes on from: the newest in its output_dir, if any."""
    return find_resume(Path(config.output_dir) / CHECKPOINTS, "auto")


def _resume(config: SFTConfig, model: Any, optimizer: Any, schedule: Any) -> int:
    """Load the newest checkpoint of this output_dir into the model, optimizer and schedule; its step (0: none)."""
    found = resume_point(config)
    if found is None:
        return 0
    root = found.parent
    saved, ours = json.loads((found / "state.json").read_text()), _resume_key(config)
    if saved["config"] != ours:
        changed = sorted(k for k in saved["config"] if saved["config"][k] != ours.get(k))
        raise ConfigError(
            f"{found}: a checkpoint of another SFT config ({', '.join(changed)} differ); "
            f"remove {root} to start again, or use another output_dir"
        )
    learner_state, _ = load_checkpoint(found, model)
    optimizer.load_state_dict(learner_state["optimizer"])
    schedule.load_state_dict(learner_state["scheduler"])
    return int(saved["step"])


def _read_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _save(model: Any, tokenizer: Any, folder: Path) -> None:
    """An ordinary transformers folder (LoRA merged in), written beside and then moved into place."""
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tmp = folder.with_name(folder.name + ".tmp")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if folder.exists():
        shutil.rmtree(folder)
    tmp.replace(folder)
