"""The clipped policy-gradient objective over the model's own tokens.

Per model token t of a trajectory with advantage A:

    r_t    = exp(logp_t - old_logp_t)
    pg_t   = -min(r_t * A, clip(r_t, 1 - clip_low, 1 + clip_high) * A)
    kl_t   = exp(ref_t - logp_t) - (ref_t - logp_t) - 1          (k3 estimator, >= 0)
    loss   = sum_t w_t * (pg_t + kl_coef * kl_t)

kl_t is measured whatever kl_coef is (0 keeps it out of the loss), and so is
the entropy of the policy's next-token distribution at each model token: the
two numbers that show how far training has moved the policy.

The weights w_t carry both the mask (0 on prompts, tool results, padding) and
the normalisation, computed once for the whole batch so that gradient
accumulation over micro-batches gives the same gradient as one big batch:
'token' gives every model token in the batch weight 1/N; 'sequence' gives each
trajectory total weight 1/T, shared by its tokens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields

import torch

from trainer.samples import TrainItem


def token_logprobs(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """logprob of token i given tokens < i, at `temperature`; shape [B, T], column 0 is 0."""
    scaled = logits[:, :-1].float() / temperature
    targets = token_ids[:, 1:].unsqueeze(-1)
    picked = scaled.gather(-1, targets).squeeze(-1) - torch.logsumexp(scaled, dim=-1)
    return torch.nn.functional.pad(picked, (1, 0), value=0.0)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy (nats) of the distribution token i was sampled from, at `temperature`; shape [B, T], column 0 is 0."""
    logp = torch.log_softmax(logits[:, :-1].float() / temperature, dim=-1)
    entropy = -(logp.exp() * logp).sum(dim=-1)
    return torch.nn.functional.pad(entropy, (1, 0), value=0.0)


def item_weights(items: Sequence[TrainItem], normalization: str) -> list[float]:
    """The loss weight of each model token of each item (the same for all tokens of one item)."""
    tokens = [item.sample.model_tokens for item in items]
    if normalization == "token":
        total = sum(tokens)
        return [1.0 / total if total else 0.0 for _ in items]
    if normalization == "sequence":
        per_trajectory: Counter[int] = Counter()
        for item, n in zip(items, tokens, strict=True):
            per_trajectory[item.trajectory] += n
        n_traj = sum(1 for n in per_trajectory.values() if n)
        return [
            1.0 / (n_traj * per_trajectory[item.trajectory]) if per_trajectory[item.trajectory] else 0.0
            for item in items
        ]
    raise ValueError(f"unknown normalization '{normalization}' (token or sequence)")


@dataclass
class LossStats:
    """Sums over model tokens, added up across micro-batches and ranks, then divided by `tokens`."""

    tokens: float = 0.0
    clipped: float = 0.0
    ratio: float = 0.0
    kl_sampler: float = 0.0
    kl_ref: float = 0.0
    entropy: float = 0.0

    def add(self, other: LossStats) -> None:
        for name in STAT_SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def means(self) -> dict[str, float]:
        n = self.tokens or 1.0
        return {
            "clip_frac": self.clipped / n,
            "ratio_mean": self.ratio / n,
            "kl_sampler": self.kl_sampler / n,
            "kl_ref": self.kl_ref / n,
            "entropy": self.entropy / n,
        }


STAT_SUMS = tuple(f.name for f in fields(LossStats))  # summed over micro-batches and ranks


def clipped_pg_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    *,
    clip_low: float,
    clip_high: float,
    ref_logp: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    entropy: torch.Tensor | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """Weighted clipped surrogate loss (to minimise) and its token statistics.

    logp, old_logp, weights, ref_logp, entropy: [B, T]; advantages: [B] (one per sequence) or [B, T].
    Positions with weight 0 contribute nothing, whatever their logprobs hold. `entropy` (per token,
    token_entropy) only enters the statistics.
    """
    mask = weights != 0
    adv = advantages.unsqueeze(-1) if advantages.dim() == 1 else advantages
    log_ratio = torch.where(mask, logp - old_logp, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high) * adv
    per_token = -torch.minimum(unclipped, clipped)
    kl_ref = torch.zeros_like(logp)
    if ref_logp is not None:
        delta = torch.where(mask, ref_logp - logp, torch.zeros_like(logp))
        kl_ref = torch.exp(delta) - delta - 1.0
        if kl_coef:
            per_token = per_token + kl_coef * kl_ref
    loss = (per_token * weights).sum()
    with torch.no_grad():
        is_clipped = ((adv > 0) & (ratio > 1.0 + clip_high)) | ((adv < 0) & (ratio < 1.0 - clip_low))
        m = mask.float()
        stats = LossStats(
            tokens=float(m.sum()),
            clipped=float((is_clipped.float() * m).sum()),
            ratio=float((ratio * m).sum()),
            kl_sampler=float(((ratio - 1.0 - log_ratio) * m).sum()),
            kl_ref=float((kl_ref * m).sum()),
            entropy=float((entropy * m).sum()) if entropy is not None else 0.0,
        )
    return loss, stats
