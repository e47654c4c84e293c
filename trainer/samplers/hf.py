"""Transformers sampler (CPU): the gym's inference engine over the learner's own model.

In one process the engine holds the learner's model object, so a weight sync
only drops the engine's cached prefixes (they were computed with the old
weights). Every completion draws from its own generator, seeded from its
request's seed and its index, so its tokens do not depend on what else is in
the batch (up to float rounding in batched matmuls, which is why a step's requests are
submitted together: the batches are then the same on every run). Logprobs are those of each
sampled token at the sampling temperature, the quantity the learner recomputes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gym.models.engine import Engine
from trainer.samplers.base import Completion, Request, WeightUpdate, engine_params
from trainer.seeding import derive_seed
from trainer.weights import import_weights

if TYPE_CHECKING:
    from gym.policies.base import Policy
    from trainer.config import SamplingConfig, TrainConfig


class HFSampler:
    """Samples from a transformers causal LM through one shared Engine."""

    shares_model = True

    def __init__(self, model: Any, tokenizer: Any, *, max_batch: int = 256) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.engine = Engine(model, tokenizer, max_batch=max_batch)  # a step samples whole groups at once
        self.version = 0

    @classmethod
    def build(cls, config: TrainConfig, tokenizer: Any, model: Any) -> HFSampler:
        return cls(model, tokenizer, max_batch=config.sampler.max_batch)

    def generate(self, requests: Sequence[Request], params: SamplingConfig) -> list[list[Completion]]:
        """All completions are queued at once, together: the engine's batches, and so the samples,
        are the same on every run however busy the machine (Engine.together)."""
        sampling = engine_params(params)
        with self.engine.together():
            pending = [
                [self.engine.submit(r.prompt_ids, sampling, seed=derive_seed(r.seed, i)) for i in range(r.n)]
                for r in requests
            ]
        out = []
        for group in pending:
            results = [request.future.result() for request in group]
            out.append(
                [
                    Completion(g.token_ids, g.logprobs, "stop" if g.finish_reason == "stop" else "length")
                    for g in results
                ]
            )
        return out

    def sync(self, update: WeightUpdate) -> None:
        self.version = update.version
        if update.model is self.model:
            self.engine.reload()  # same object as the learner's: only the cached prefixes are stale
            return
        self.engine.reload(lambda: import_weights(self.model, update.named_tensors()))

    def chat_policy(self, params: SamplingConfig, seed: int) -> Policy:
        """The gym's own `hf` policy on this engine (weights shared, so always current)."""
        from gym.policies.hf import HFPolicy

        return HFPolicy(
            self.engine,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,
            max_new_tokens=params.max_new_tokens,
            seed=seed,
        )
