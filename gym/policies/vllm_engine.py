"""`vllm`: an in-process vLLM engine on a GPU node, for fast batch rollouts of local models.

vLLM is imported when the policy is built, never at import of the gym. The
engine is vLLM's async engine, so the turns of all concurrent episodes are
batched together by vLLM's scheduler. Prompts are rendered here with the
model's chat template (gym.policies.chat_render), so every turn carries the
exact prompt token ids, the sampled token ids and each sampled token's logprob.

Logprobs: the engine is built with `logprobs_mode="processed_logprobs"`
(after temperature scaling), the quantity the GRPO learner recomputes. Pass
your own `engine` (e.g. one shared by several policies) to choose otherwise.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.errors import PolicyError
from core.trajectory import AssistantTurn, Message
from gym.policies.chat_render import completion_turn, render_prompt_ids, stop_token_ids


class VLLMPolicy:
    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        engine: Any = None,
        tokenizer: Any = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        context_window: int | None = None,
        engine_args: dict[str, Any] | None = None,
        lora_path: str | None = None,
        template_kwargs: dict[str, Any] | None = None,
    ):
        """`model`: hub id or folder. `engine_args`: vllm.AsyncEngineArgs fields (gpu_memory_utilization, ...).

        `lora_path`: serve a LoRA adapter on top of the model (the engine is built with enable_lora).
        """
        try:
            from transformers import AutoTokenizer
            from vllm import AsyncEngineArgs, AsyncLLMEngine, SamplingParams
        except ImportError as exc:
            raise PolicyError(
                f"vllm policy needs vLLM on a GPU node: {exc} (pip install 'enterprise-gym[gpu]'); "
                "on CPU use the hf policy"
            ) from None
        self.model = model
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
        if engine is None:
            args = {
                "model": model,
                "logprobs_mode": "processed_logprobs",
                "enable_lora": lora_path is not None,
                **(engine_args or {}),
            }
            engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**args))
        self.engine = engine
        self.stop_ids = stop_token_ids(self.tokenizer)
        self.sampling = SamplingParams(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            logprobs=0,
            stop_token_ids=self.stop_ids,
            skip_special_tokens=False,
        )
        self.context_window = context_window or (engine_args or {}).get("max_model_len")
        self.template_kwargs = template_kwargs or {}
        self.lora_request = None
        if lora_path:
            self.load_adapter(lora_path)

    def load_adapter(self, path: str, version: int = 1) -> None:
        """Serve the LoRA adapter in `path` from now on; use a new `version` for each new adapter."""
        from vllm.lora.request import LoRARequest

        self.lora_request = LoRARequest(f"egym-adapter-v{version}", version, path)

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return len(render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs))

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        from vllm.inputs import TokensPrompt

        prompt_ids = render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs)
        final = None
        async for output in self.engine.generate(
            TokensPrompt(prompt_token_ids=prompt_ids),
            self.sampling,
            request_id=uuid.uuid4().hex,
            lora_request=self.lora_request,
        ):
            final = output
        if final is None or not final.outputs:
            raise PolicyError(f"vllm policy ({self.model}): the engine returned no output")
        return turn_from_output(
            self.tokenizer,
            prompt_ids,
            final.outputs[0],
            self.stop_ids,
            [t["function"]["name"] for t in tools],
        )


def turn_from_output(
    tokenizer: Any,
    prompt_ids: list[int],
    completion: Any,
    stop_ids: list[int],
    tool_names: list[str] | None = None,
) -> AssistantTurn:
    """A vLLM CompletionOutput (token_ids, logprobs: one {token_id: Logprob} per position) as a turn."""
    token_ids = list(completion.token_ids)
    entries = completion.logprobs or []
    if len(entries) != len(token_ids):
        raise PolicyError(
            f"vllm returned {len(entries)} logprob entries for {len(token_ids)} tokens; "
            "sampling must request logprobs=0"
        )
    logprobs = [entry[token].logprob for entry, token in zip(entries, token_ids, strict=True)]
    return completion_turn(
        tokenizer, prompt_ids, token_ids, logprobs, stop_ids, completion.finish_reason, tool_names
    )
