"""`vllm`: a local model on a GPU node, served by vLLM in this process (gym.policies.vllm_engine).

    egym rollout tasks/acme/collections-list --policy vllm --model Qwen/Qwen2.5-7B-Instruct

Never run: vLLM cannot be installed where this was written (docs/training.md).
`model` is a hub id or folder, or a VLLMEngine the caller owns (the trainer's);
every policy on one engine is batched with the others. As with `hf`, prompts
are rendered here with the model's chat template (gym.policies.chat_render), so
each turn carries the exact prompt token ids, the sampled token ids and each
sampled token's logprob after temperature, the quantity the learner recomputes.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Message
from gym.models.sampling import SamplingParams
from gym.policies.chat_render import completion_turn, render_prompt_ids, stop_token_ids
from gym.policies.vllm_engine import Prompt, VLLMEngine


class VLLMPolicy:
    name = "vllm"

    @staticmethod
    def model_key(options: dict[str, Any]) -> str:
        """The weights' name and fingerprint (gym.models.identity)."""
        from gym.models.identity import local_model_key

        return local_model_key(options.get("model"))

    def __init__(
        self,
        model: str | VLLMEngine,
        *,
        tokenizer: Any = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_tokens: int = 1024,
        seed: int | None = None,
        context_window: int | None = None,
        engine_args: dict[str, Any] | None = None,
        lora_path: str | None = None,
        template_kwargs: dict[str, Any] | None = None,
    ):
        """`engine_args`: `vllm.LLM` keywords (gpu_memory_utilization, max_model_len, ...) for a new engine.

        `tokenizer`: defaults to the engine's. `lora_path`: serve that LoRA adapter on top of the model.
        `seed`: each turn's randomness derives from it (reproducible episodes given the same tool outputs).
        """
        if isinstance(model, VLLMEngine):
            self.engine = model
        else:
            args = {"enable_lora": lora_path is not None, **(engine_args or {})}
            try:
                self.engine = VLLMEngine(model, **args)
            except ImportError as exc:
                raise PolicyError(
                    f"vllm policy needs vLLM on a GPU node: {exc} (pip install 'enterprise-gym[gpu]'); "
                    "on CPU use the hf policy"
                ) from None
        if lora_path:
            self.engine.use_adapter(lora_path, 1)
        self.model = self.engine.name
        self.tokenizer = tokenizer or self.engine.tokenizer
        self.stop_ids = stop_token_ids(self.tokenizer)
        self.sampling = SamplingParams(
            temperature=temperature, top_p=top_p, top_k=top_k, max_new_tokens=max_tokens
        )
        self.seed, self.turns = seed, 0
        self.context_window = context_window or self.engine.window
        self.template_kwargs = template_kwargs or {}

    def capped(self, max_new_tokens: int) -> VLLMPolicy:
        """This policy (same engine, seed and sampling) with turns of at most `max_new_tokens`."""
        clone = copy.copy(self)
        limit = min(self.sampling.max_new_tokens, max_new_tokens)
        clone.sampling = self.sampling.model_copy(update={"max_new_tokens": limit})
        return clone

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return len(render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs))

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        prompt_ids = render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs)
        seed = None if self.seed is None else hash((self.seed, len(messages), self.turns)) & (2**63 - 1)
        self.turns += 1
        (future,) = self.engine.submit([Prompt(prompt_ids, 1, seed)], self.sampling, stop_ids=self.stop_ids)
        (generation,) = await asyncio.wrap_future(future)
        return completion_turn(
            self.tokenizer,
            prompt_ids,
            generation.token_ids,
            generation.logprobs,
            self.stop_ids,
            generation.finish_reason,
            tool_names=[t["function"]["name"] for t in tools],
        )
