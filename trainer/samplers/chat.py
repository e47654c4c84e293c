"""A gym Policy on any Sampler: the harness's chat rendering and tool-call parsing, the sampler's tokens.

Used where the engine is in another process (a SamplerServer over Ray); in
process each sampler hands out the gym's own policy on its engine.
The prompt is rendered with the same code as the `hf`/`vllm` policies
(gym.policies.chat_render), so what the model saw is exactly the token ids
recorded. Each turn samples with a seed derived from the rollout's seed and
the turn index, so a rollout's tokens do not depend on what else is in flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.trajectory import AssistantTurn, Message
from gym.policies.chat_render import completion_turn, render_prompt_ids, stop_token_ids
from trainer.samplers.base import Request
from trainer.seeding import derive_seed


class SamplerChatPolicy:
    def __init__(
        self,
        sampler: Any,
        tokenizer: Any,
        params: Any,
        *,
        seed: int,
        name: str = "sampler",
        context_window: int | None = None,
    ) -> None:
        self.sampler = sampler
        self.tokenizer = tokenizer
        self.params = params
        self.seed = seed
        self.name = name
        self.model = getattr(tokenizer, "name_or_path", None) or name
        self.context_window = context_window or getattr(tokenizer, "model_max_length", None)
        if self.context_window and self.context_window > 10_000_000:  # transformers' "unknown" sentinel
            self.context_window = None
        self.stop_ids = stop_token_ids(tokenizer)
        self.turns = 0

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return len(render_prompt_ids(self.tokenizer, messages, tools))

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        prompt_ids = render_prompt_ids(self.tokenizer, messages, tools)
        seed = derive_seed(self.seed, self.turns)
        self.turns += 1
        ((completion,),) = await asyncio.to_thread(
            self.sampler.generate, [Request(prompt_ids, 1, seed)], self.params
        )
        return completion_turn(
            self.tokenizer,
            prompt_ids,
            completion.token_ids,
            completion.logprobs,
            self.stop_ids,
            completion.finish_reason,
            tool_names=[t["function"]["name"] for t in tools],
        )
