"""Transformers sampler (CPU, tiny models, tests): a plain KV-cached sampling loop.

In one process it holds the learner's model object, so a weight sync costs
nothing. The loop is ours rather than `model.generate` because it takes a
private `torch.Generator` per request (reproducible per group, independent of the global
RNG) and returns the logprob of each sampled token at the sampling
temperature, the same quantity the learner recomputes. Requests with prompts
of equal length share one batch; each request samples from its own generator
(inverse-CDF on its own uniforms), so a request's tokens do not depend on
what else is in the batch (up to float rounding in batched matmuls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from trainer.samplers.base import Completion, Request, WeightUpdate
from trainer.weights import import_weights

if TYPE_CHECKING:
    from gym.policies.base import Policy
    from trainer.config import SamplingConfig


def end_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """Every token id that ends a completion (tokenizer EOS plus the generation config's)."""
    ids: set[int] = set()
    for value in (getattr(tokenizer, "eos_token_id", None), getattr(model.generation_config, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif value:
            ids.update(value)
    return ids


def _filter(logits: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """Logits with everything outside top-k / the top-p nucleus set to -inf."""
    if top_k and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
        cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
        drop_sorted = cumulative - torch.softmax(sorted_logits, dim=-1) > top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


class HFSampler:
    """Samples from a transformers causal LM; `n` completions of one prompt run as one batch."""

    def __init__(self, model: Any, tokenizer: Any, *, shared: bool = True) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.shared = shared  # True: `model` is the learner's own object
        self.end_ids = end_token_ids(model, tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(self.end_ids, default=0)
        self.version = 0
        self._policies: dict[tuple, Policy] = {}

    @torch.no_grad()
    def generate(self, requests: Sequence[Request], params: SamplingConfig) -> list[list[Completion]]:
        """Requests with prompts of equal length run as one batch (no padding, so no position tricks)."""
        out: list[list[Completion]] = [[] for _ in requests]
        by_length: dict[int, list[int]] = {}
        for index, request in enumerate(requests):
            by_length.setdefault(len(request.prompt_ids), []).append(index)
        was_training = self.model.training
        self.model.eval()
        try:
            for indices in by_length.values():
                batch = [requests[i] for i in indices]
                for i, completions in zip(indices, self._batch(batch, params), strict=True):
                    out[i] = completions
        finally:
            self.model.train(was_training)
        return out

    def _batch(self, requests: list[Request], params: SamplingConfig) -> list[list[Completion]]:
        device = next(self.model.parameters()).device
        input_ids = torch.tensor([r.prompt_ids for r in requests for _ in range(r.n)], device=device)
        generators = [torch.Generator(device="cpu").manual_seed(r.seed) for r in requests]
        tokens, logprobs = self._loop(input_ids, params, lambda: self._uniforms(requests, generators, device))
        rows = iter(zip(tokens, logprobs, strict=True))
        return [[self._completion(*next(rows), params.max_new_tokens) for _ in range(r.n)] for r in requests]

    @staticmethod
    def _uniforms(requests: list[Request], generators: list[torch.Generator], device: torch.device) -> torch.Tensor:
        """One U(0,1) per row, each request's rows drawn from that request's own generator."""
        return torch.cat([torch.rand(r.n, generator=g) for r, g in zip(requests, generators, strict=True)]).to(device)

    def _loop(
        self, input_ids: torch.Tensor, params: SamplingConfig, uniforms: Callable[[], torch.Tensor]
    ) -> tuple[list[list[int]], list[list[float]]]:
        n = input_ids.shape[0]
        done = torch.zeros(n, dtype=torch.bool, device=input_ids.device)
        end = torch.tensor(sorted(self.end_ids), device=input_ids.device)
        out = self.model(input_ids=input_ids, use_cache=True)
        steps_tokens, steps_logprobs = [], []
        for _ in range(params.max_new_tokens):
            scaled = out.logits[:, -1].float() / params.temperature
            logp = torch.log_softmax(scaled, dim=-1)
            cdf = torch.softmax(_filter(scaled, params.top_k, params.top_p), dim=-1).cumsum(-1)
            # inverse-CDF sampling: per-row random numbers from per-request generators
            nxt = torch.searchsorted(cdf, uniforms()[:, None] * cdf[:, -1:]).squeeze(-1).clamp_max(cdf.shape[-1] - 1)
            steps_tokens.append(torch.where(done, self.pad_id, nxt))
            steps_logprobs.append(logp.gather(-1, nxt[:, None]).squeeze(-1))
            done = done | torch.isin(nxt, end)
            if bool(done.all()):
                break
            out = self.model(input_ids=nxt[:, None], past_key_values=out.past_key_values, use_cache=True)
        tokens = torch.stack(steps_tokens, dim=1).tolist()
        logprobs = torch.stack(steps_logprobs, dim=1).tolist()
        return tokens, logprobs

    def _completion(self, tokens: list[int], logprobs: list[float], max_new: int) -> Completion:
        for i, token in enumerate(tokens):
            if token in self.end_ids:
                return Completion(tokens[: i + 1], logprobs[: i + 1], "stop")
        return Completion(tokens, logprobs, "length" if len(tokens) >= max_new else "stop")

    def sync(self, update: WeightUpdate) -> None:
        self.version = update.version
        if update.model is self.model:
            return  # same object as the learner's: already up to date
        import_weights(self.model, update.named_tensors())

    def chat_policy(self, params: SamplingConfig, seed: int) -> Policy:
        """The gym's own `hf` policy on this model object (weights are shared, so always current).

        It samples with the global torch RNG, so gym rollouts are not replayable
        token for token (sandbox timing makes them non-deterministic anyway).
        """
        from gym.policies.hf import HFPolicy

        key = (params.temperature, params.top_p, params.max_new_tokens)
        if key not in self._policies:  # one object per settings: its lock serialises generation on this model
            self._policies[key] = HFPolicy(self.model, self.tokenizer, temperature=params.temperature,
                                           top_p=params.top_p, max_new_tokens=params.max_new_tokens)
        return self._policies[key]
