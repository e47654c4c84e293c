"""Sampling parameters and the one sampling step every local generation uses (engine and trainer alike).

The logprob kept for a sampled token is log_softmax(logits / T) at that token,
before top-k/top-p filtering: the quantity the GRPO learner recomputes. Each
request draws from its own torch.Generator (inverse-CDF on its own uniforms),
so its tokens do not depend on what else is in the batch.
"""

from __future__ import annotations

from pydantic import Field

from core.strict import StrictModel


class SamplingParams(StrictModel, frozen=True):
    """How one completion is sampled."""

    temperature: float = Field(0.7, ge=0, le=5, description="0 = greedy.")
    top_p: float = Field(
        0.95, gt=0, le=1, description="Nucleus sampling: smallest set of tokens with this mass."
    )
    top_k: int = Field(0, ge=0, description="Keep the k most likely tokens; 0 = off.")
    max_new_tokens: int = Field(512, ge=1, le=32768, description="Longest completion in tokens.")
    stop: tuple[str, ...] = Field(
        (), description="Strings that end the completion (kept in it), e.g. '</tool_call>'."
    )


def filter_logits(logits, top_k: int, top_p: float):
    """Logits with everything outside top-k / the top-p nucleus set to -inf (rows independent)."""
    import torch

    if top_k and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
        probs = torch.softmax(sorted_logits, dim=-1)
        drop_sorted = probs.cumsum(-1) - probs > top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def sample(logits, params: SamplingParams, uniforms, model_logits=None):
    """(token ids, logprobs) for rows of `logits` [rows, vocab] under one set of params.

    `uniforms` holds one U(0,1) per row (from each request's own generator); greedy ignores it.
    `model_logits`: the model's own logits when `logits` were changed (constrained decoding): the
    logprobs are always the model's.
    """
    import torch

    logits = logits.float()
    model_logits = logits if model_logits is None else model_logits.float()
    if params.temperature == 0:
        tokens = logits.argmax(dim=-1)
        return tokens, torch.log_softmax(model_logits, dim=-1).gather(-1, tokens[:, None]).squeeze(-1)
    scaled = logits / params.temperature
    logprobs = torch.log_softmax(model_logits / params.temperature, dim=-1)
    cdf = torch.softmax(filter_logits(scaled, params.top_k, params.top_p), dim=-1).cumsum(-1)
    tokens = torch.searchsorted(cdf, uniforms[:, None] * cdf[:, -1:]).squeeze(-1).clamp_max(cdf.shape[-1] - 1)
    return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)
