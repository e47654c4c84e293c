"""`hf`: a local transformers model, served by the process's shared engine (gym.models.engine).

    egym rollout tasks/acme/collections-list --policy hf --model smollm2

The model runs on the GPU when there is one, else on the CPU (`--option device=cpu` chooses).

`model` is a bundled name (`smollm2`), a model folder or a GGUF file
(gym.models.store), or an Engine the caller owns (the trainer's). Every policy
object on one model shares one engine, so concurrent episodes are batched
together and the model is loaded once per process.

Each turn carries the prompt token ids, the sampled token ids and the logprob
of each under the model at the sampling temperature, so GRPO can train on
exactly what was sampled. When the episode's time runs out mid-turn, the turn
comes back with what was written so far, marked truncated.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Literal

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Message
from gym.models.sampling import SamplingParams
from gym.policies.chat_render import completion_turn, render_prompt_ids, stop_strings, stop_token_ids


class HFPolicy:
    name = "hf"

    @staticmethod
    def model_key(options: dict[str, Any]) -> str:
        """The weights' name and fingerprint (gym.models.identity)."""
        from gym.models.identity import local_model_key

        return local_model_key(options.get("model"))

    def __init__(
        self,
        model: Any = None,
        *,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int = 0,
        max_new_tokens: int = 512,
        dtype: str = "float32",
        device: str | None = None,
        threads: int | None = None,
        seed: int | None = None,
        context_window: int | None = None,
        constrained: bool = False,
        tool_choice: Literal["auto", "first", "required"] = "auto",
        logits_processor: Any = None,
        template_kwargs: dict[str, Any] | None = None,
    ):
        """Sampling defaults to the model's generation_config, else temperature 0.7 and top_p 0.95.

        `device`: where a model loaded here runs ('cpu', 'cuda', 'cuda:1'); by default the GPU if any.
        `seed`: each turn's randomness derives from it (reproducible episodes given the same tool outputs).
        `constrained`: a tool call, once started, is decoded under its JSON grammar (gym.policies.constrained).
        `tool_choice`: "first" makes the first turn a tool call (OpenAI's "required", for one turn);
        "required" makes every turn one (what `egym models serve` does for tool_choice="required").
        `logits_processor`: (tokens so far, logits) -> logits, applied to every turn (tests script a model
        with it); the logprobs stay those of the model itself.
        """
        from gym.models.engine import Engine
        from gym.models.store import resolve_model

        self.engine = (
            model
            if isinstance(model, Engine)
            else Engine.shared(str(resolve_model(model)), dtype=dtype, device=device, threads=threads)
        )
        self.tokenizer = self.engine.tokenizer
        if not getattr(self.tokenizer, "chat_template", None):
            raise PolicyError(
                f"hf policy: {self.engine.name} has no chat template; set tokenizer.chat_template"
            )
        self.model_name = self.engine.name
        defaults = self.engine.model.generation_config
        self.sampling = SamplingParams(
            temperature=temperature if temperature is not None else _default(defaults, "temperature", 0.7),
            top_p=top_p if top_p is not None else _default(defaults, "top_p", 0.95),
            top_k=top_k,
            max_new_tokens=max_new_tokens,
        )
        self.seed, self.turns = seed, 0
        self.context_window = context_window or self.engine.window
        self.template_kwargs = template_kwargs or {}
        self.constrained, self.tool_choice, self.logits_processor = constrained, tool_choice, logits_processor
        if tool_choice not in ("auto", "first", "required"):
            raise PolicyError(
                f"hf policy: tool_choice must be 'auto', 'first' or 'required', not {tool_choice!r}"
            )
        self.stop_ids = stop_token_ids(self.tokenizer, getattr(defaults, "eos_token_id", None))

    @property
    def model(self) -> str:
        """The model's name, for trajectories."""
        return self.model_name

    def capped(self, max_new_tokens: int) -> HFPolicy:
        """This policy (same engine, seed and sampling) with turns of at most `max_new_tokens`."""
        clone = copy.copy(self)
        limit = min(self.sampling.max_new_tokens, max_new_tokens)
        clone.sampling = self.sampling.model_copy(update={"max_new_tokens": limit})
        return clone

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return len(render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs))

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        prompt_ids = render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs)
        processor = self.logits_processor
        required = self.tool_choice == "required" or (
            self.tool_choice == "first" and not any(m.tool_calls for m in messages)
        )
        if processor is None and tools and (self.constrained or required):
            from gym.policies.constrained import tool_call_processor

            processor = tool_call_processor(
                self.tokenizer,
                tools,
                self.stop_ids,
                required=required,
                max_new_tokens=self.sampling.max_new_tokens,
            )
        # Under a grammar the processor ends the turn after a call; otherwise stop at the closing tag.
        stop = (
            ()
            if processor is not None and processor is not self.logits_processor
            else stop_strings(self.tokenizer, tools)
        )
        params = self.sampling.model_copy(update={"stop": stop})
        seed = None if self.seed is None else hash((self.seed, len(messages), self.turns)) & (2**63 - 1)
        self.turns += 1
        request = self.engine.submit(prompt_ids, params, seed=seed, processor=processor)
        waiting = asyncio.wrap_future(request.future)
        try:
            generation = await asyncio.shield(waiting)
        except asyncio.CancelledError:  # the episode's time ran out: hand back what was written so far
            self.engine.stop(request)
            generation = await waiting
        return completion_turn(
            self.tokenizer,
            prompt_ids,
            generation.token_ids,
            generation.logprobs,
            self.stop_ids,
            generation.finish_reason,
            tool_names=[t["function"]["name"] for t in tools],
            cached_tokens=generation.cached_tokens,
        )


def _default(config: Any, key: str, fallback: float) -> float:
    """The generation_config's value when it sets one to sample with, else our default."""
    value = getattr(config, key, None)
    return fallback if value is None or not getattr(config, "do_sample", False) else value
