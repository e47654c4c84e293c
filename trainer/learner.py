"""The learner: turns a batch of train items into optimizer steps on the policy.

Gradients are accumulated over micro-batches with loss weights computed once
for the whole mini-batch, so the gradient does not depend on how the batch
was split. With `world_size > 1` (one learner per GPU) each rank takes every
world_size-th item of a mini-batch and the gradients are summed with
torch.distributed, giving the same update as one big learner.

Forward passes run in the model's compute dtype (gym.models.device); the
trainable weights and AdamW's state stay float32, and a model whose trainable
weights are narrower is refused (AdamW would round small updates away).

Every update also measures the KL to the reference (the starting policy) and
the policy's entropy, whether or not `loss.kl_coef` puts the KL in the loss.
The reference costs one no-grad forward per micro-batch. With LoRA it is the
same model with the adapter disabled (no memory). A full fine-tune keeps a
frozen float32 copy made at start: the starting weights exist nowhere else
once the optimizer moves them (log-probs taken before each update would be
the previous step's policy, not the start), and float32, as the policy
computes, makes the KL exactly 0 until the first update.
"""

from __future__ import annotations

import copy
import inspect
import time
from collections.abc import Sequence
from typing import Any

import torch

from core.errors import ConfigError
from gym.models.device import computing
from trainer.batching import MicroBatch, micro_batches
from trainer.config import TrainConfig
from trainer.loss import STAT_SUMS, LossStats, clipped_pg_loss, item_weights, token_entropy, token_logprobs
from trainer.samplers.base import WeightUpdate
from trainer.samples import Sample, TrainItem
from trainer.weights import is_peft, lora_config_dict


class Learner:
    def __init__(
        self, config: TrainConfig, model: Any, tokenizer: Any, *, rank: int = 0, world_size: int = 1
    ):
        self.config = config
        self.model = model
        self.tokenizer = tokenizer
        self.rank, self.world_size = rank, world_size
        self.pad_id = tokenizer.pad_token_id or 0
        self.device = next(model.parameters()).device
        self.params = _float32_trainable(model)
        opt = config.optim
        self.optimizer = torch.optim.AdamW(
            self.params, lr=opt.lr, betas=opt.betas, eps=opt.eps, weight_decay=opt.weight_decay
        )
        self.scheduler = warmup_schedule(self.optimizer, opt.warmup_steps)
        self.reference = self._reference()
        self._keeps_logits = accepts_logits_to_keep(model)
        self._set_mode()

    def _set_mode(self) -> None:
        """Eval mode (no dropout, the sampler's numerics), unless checkpointing: transformers checkpoints
        layers only in training mode, and a model from from_pretrained starts in eval mode. Dropout is
        already 0 (load_policy), so training mode changes nothing else."""
        self.model.train(self.config.model.gradient_checkpointing)

    def _reference(self) -> Any:
        if is_peft(self.model):
            return None  # the base model with the adapter disabled
        return copy.deepcopy(self.model).eval().requires_grad_(False)

    # -- forward passes -------------------------------------------------

    def _logits(self, model: Any, batch: MicroBatch) -> tuple[torch.Tensor, int]:
        """Logits from column `start` on, and `start`: the column before the batch's first scored token.

        Positions before it only feed attention, so asking the model for logits from there on skips
        most of the [B, T, vocab] tensor (the largest activation, and the lm-head matmul) on long prompts.
        """
        width = batch.input_ids.shape[1]
        start = first_scored(batch.weights) - 1 if self._keeps_logits else 0
        kwargs = {"logits_to_keep": width - start} if self._keeps_logits else {}
        with computing(model):
            out = model(
                input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False, **kwargs
            )
        return out.logits, start

    def _logprobs(self, batch: MicroBatch, model: Any = None) -> torch.Tensor:
        """Logprobs [B, T] under `model` (default: the policy); 0 before the batch's first scored token."""
        logits, start = self._logits(model if model is not None else self.model, batch)
        temperature = self.config.sampling.temperature
        return _from_column(token_logprobs(logits, batch.input_ids[:, start:], temperature), start)

    @torch.no_grad()
    def _ref_logprobs(self, batch: MicroBatch) -> torch.Tensor:
        """Logprobs [B, T] under the reference: the starting policy."""
        if self.reference is not None:
            return self._logprobs(batch, self.reference)
        with self.model.disable_adapter():
            return self._logprobs(batch)

    @torch.no_grad()
    def recompute_old_logprobs(self, items: Sequence[TrainItem]) -> list[TrainItem]:
        """Items whose old logprobs are the learner's own (before this update), not the sampler's."""
        out = []
        size = self.config.update.micro_batch_size
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            batch = next(micro_batches(chunk, [1.0] * len(chunk), size, self.pad_id, self.device))
            logp = self._logprobs(batch).cpu()
            for row, item in enumerate(chunk):
                s = item.sample
                lps = [
                    lp if m else 0.0
                    for lp, m in zip(logp[row, : len(s.token_ids)].tolist(), s.mask, strict=True)
                ]
                out.append(TrainItem(Sample(s.token_ids, s.mask, lps), item.advantage, item.trajectory))
        return out

    # -- the update -----------------------------------------------------

    def update(self, items: Sequence[TrainItem]) -> dict[str, float]:
        """Optimizer step(s) on `items` (all of them, on every rank). Returns this rank's statistics."""
        started = time.perf_counter()
        self._set_mode()  # the sampler shares the model and may have switched it
        items = list(items)
        if self.config.loss.old_logprobs == "recompute":
            items = self.recompute_old_logprobs(items)
        minis = _split(items, self.config.update.mini_batches)
        stats, loss_total, grad_norm, lr = LossStats(), 0.0, 0.0, 0.0
        for mini in minis:
            loss, mini_stats, grad_norm, lr = self._optimizer_step(mini)
            loss_total += loss / len(minis)
            stats.add(mini_stats)
        own = [it for mini in minis for it in mini[self.rank :: self.world_size]]
        return {
            "loss": loss_total,
            "grad_norm": grad_norm,
            "lr": lr,
            "tokens_model": stats.tokens,
            "tokens_total": float(sum(len(it.sample.token_ids) for it in own)),
            "time_update": time.perf_counter() - started,
            **{f"_sum_{k}": getattr(stats, k) for k in STAT_SUMS},
        }

    def _optimizer_step(self, items: list[TrainItem]) -> tuple[float, LossStats, float, float]:
        weights = item_weights(items, self.config.loss.normalization)
        mine = list(range(self.rank, len(items), self.world_size))
        self.optimizer.zero_grad(set_to_none=False)
        stats, loss_sum = LossStats(), 0.0
        size = self.config.update.micro_batch_size
        temperature = self.config.sampling.temperature
        for batch in micro_batches(
            [items[i] for i in mine], [weights[i] for i in mine], size, self.pad_id, self.device
        ):
            logits, start = self._logits(self.model, batch)
            logp = _from_column(token_logprobs(logits, batch.input_ids[:, start:], temperature), start)
            with torch.no_grad():
                entropy = _from_column(token_entropy(logits, temperature), start)
            loss, batch_stats = clipped_pg_loss(
                logp,
                batch.old_logprobs,
                batch.advantages,
                batch.weights,
                clip_low=self.config.loss.clip_low,
                clip_high=self.config.loss.clip_high,
                ref_logp=self._ref_logprobs(batch),
                kl_coef=self.config.loss.kl_coef,
                entropy=entropy,
            )
            loss.backward()
            loss_sum += float(loss.detach())
            stats.add(batch_stats)
        self._all_reduce_grads()
        max_norm = self.config.optim.max_grad_norm
        norm = torch.nn.utils.clip_grad_norm_(self.params, max_norm if max_norm > 0 else float("inf"))
        lr = self.scheduler.get_last_lr()[0]  # the rate this step uses; the scheduler then sets the next
        self.optimizer.step()
        self.scheduler.step()
        return loss_sum, stats, float(norm), lr

    def _all_reduce_grads(self) -> None:
        if self.world_size == 1:
            return
        import torch.distributed as dist

        for p in self.params:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)

    # -- weights and state ---------------------------------------------

    def weight_update(self, version: int) -> WeightUpdate:
        return WeightUpdate(version=version, model=self.model, lora_config=lora_config_dict(self.model))

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])


def warmup_schedule(optimizer: torch.optim.Optimizer, steps: int) -> torch.optim.lr_scheduler.LRScheduler:
    """Linear warm-up: optimizer step k (1-based) uses lr * k / steps until k = steps, then lr."""
    return torch.optim.lr_scheduler.LinearLR(
        optimizer, start_factor=1.0 / steps if steps else 1.0, total_iters=max(steps - 1, 0)
    )


def _float32_trainable(model: Any) -> list[torch.nn.Parameter]:
    """The trainable parameters, refused (ConfigError) if one is narrower than float32: AdamW would
    round updates smaller than its precision away (lr 1e-6 on bfloat16 weights changes well under 1 %
    of them). trainer.model.load_policy keeps them float32 and computes in model.dtype."""
    params = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.is_floating_point() and torch.finfo(param.dtype).bits < 32:
            raise ConfigError(
                f"trainable parameter {name} is {str(param.dtype).removeprefix('torch.')}: the optimizer "
                "needs float32 weights (load the model with load_policy; model.dtype sets the compute dtype)"
            )
        params.append(param)
    return params


def accepts_logits_to_keep(model: Any) -> bool:
    """Whether the model's forward takes transformers' `logits_to_keep` (computes logits for the last N only)."""
    base = model.get_base_model() if is_peft(model) else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def _from_column(values: torch.Tensor, start: int) -> torch.Tensor:
    """[B, T - start] per-token values as [B, T], 0 before `start`."""
    return torch.nn.functional.pad(values, (start, 0), value=0.0)


def first_scored(weights: torch.Tensor) -> int:
    """The first column with a non-zero loss weight in any row (the last column if none): >= 1, as
    a sequence's first token is never a model token."""
    columns = weights.ne(0).any(dim=0).nonzero()
    return max(1, int(columns[0]) if len(columns) else weights.shape[1] - 1)


def _split(items: list[TrainItem], parts: int) -> list[list[TrainItem]]:
    """Up to `parts` consecutive chunks of near-equal trajectory count; a trajectory never straddles two."""
    trajectories: dict[int, list[TrainItem]] = {}
    for item in items:
        trajectories.setdefault(item.trajectory, []).append(item)
    groups = list(trajectories.values())
    parts = max(1, min(parts, len(groups)))
    size, extra = divmod(len(groups), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append([item for group in groups[start:end] for item in group])
        start = end
    return out


def combine_stats(per_rank: Sequence[dict[str, float]]) -> dict[str, float]:
    """Merge learner statistics from all ranks into the step's metrics."""
    first = per_rank[0]
    total = LossStats(**{k: sum(r[f"_sum_{k}"] for r in per_rank) for k in STAT_SUMS})
    return {
        "loss": sum(r["loss"] for r in per_rank),
        "grad_norm": first["grad_norm"],
        "lr": first["lr"],
        "tokens_model": total.tokens,
        "tokens_total": sum(r["tokens_total"] for r in per_rank),
        "time_update": max(r["time_update"] for r in per_rank),
        **total.means(),
    }
