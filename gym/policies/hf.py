"""`hf`: a transformers causal LM, on CPU in tests and small runs.

Renders the chat template with the tool schemas, samples, and parses
Hermes/Qwen `<tool_call>` blocks. Every turn carries the prompt token ids, the
sampled token ids and the logprob of each sampled token under the model at
the sampling temperature (log_softmax(logits / T), the quantity the trainer
recomputes), so GRPO can train on exactly what was sampled.

The trainer passes its live model and tokenizer (`HFPolicy(model, tokenizer)`):
generation switches the model to eval mode for the call and back after, and
one lock serialises calls, so one policy object can serve concurrent episodes.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio.to_thread

from gym.errors import PolicyError
from gym.policies.chat_render import completion_turn, render_prompt_ids, stop_token_ids
from gym.trajectory import AssistantTurn, Message


class HFPolicy:
    name = "hf"

    def __init__(self, model: str | Any, tokenizer: Any = None, *, temperature: float = 1.0, top_p: float = 1.0,
                 max_new_tokens: int = 512, context_window: int | None = None, device: str | None = None,
                 logits_processors: list[Any] | None = None, template_kwargs: dict[str, Any] | None = None):
        """`model`: a path/hub id, or a loaded PreTrainedModel (then pass its tokenizer too).

        `logits_processors`: transformers LogitsProcessor objects applied when sampling
        (constrained decoding); logprobs are still those of the model itself.
        """
        if isinstance(model, str):
            model, tokenizer = _load(model, tokenizer, device)
        if tokenizer is None:
            raise PolicyError("hf policy: a loaded model needs its tokenizer: HFPolicy(model, tokenizer)")
        if getattr(tokenizer, "chat_template", None) is None:
            raise PolicyError("hf policy: the tokenizer has no chat template; set tokenizer.chat_template")
        self.lm, self.tokenizer = model, tokenizer
        self.model_name = getattr(model.config, "_name_or_path", None) or type(model).__name__
        self.temperature, self.top_p, self.max_new_tokens = temperature, top_p, max_new_tokens
        self.context_window = context_window or getattr(model.config, "max_position_embeddings", None)
        self.logits_processors = list(logits_processors or [])
        self.template_kwargs = template_kwargs or {}
        self.stop_ids = stop_token_ids(tokenizer, getattr(model.generation_config, "eos_token_id", None))
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The model's name, for trajectories (the module itself is `self.lm`)."""
        return self.model_name

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        return len(render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs))

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        prompt_ids = render_prompt_ids(self.tokenizer, messages, tools, self.template_kwargs)
        return await anyio.to_thread.run_sync(self.generate, prompt_ids)

    def generate(self, prompt_ids: list[int]) -> AssistantTurn:
        """Sample one completion for `prompt_ids` (blocking; `next` runs it in a worker thread)."""
        import torch
        from transformers import LogitsProcessorList

        sampling = self.temperature > 0
        options: dict[str, Any] = {"do_sample": sampling, "max_new_tokens": self.max_new_tokens,
                                   "output_logits": True, "return_dict_in_generate": True,
                                   "eos_token_id": self.stop_ids,
                                   "pad_token_id": self.tokenizer.pad_token_id or self.stop_ids[0]}
        if sampling:
            options.update(temperature=self.temperature, top_p=self.top_p, top_k=0)
        if self.logits_processors:
            options["logits_processor"] = LogitsProcessorList(self.logits_processors)
        device = next(self.lm.parameters()).device
        input_ids = torch.tensor([prompt_ids], device=device)
        with self._lock, torch.no_grad():
            was_training = self.lm.training
            self.lm.eval()
            try:
                out = self.lm.generate(input_ids, attention_mask=torch.ones_like(input_ids), **options)
            finally:
                self.lm.train(was_training)
        token_ids = out.sequences[0, len(prompt_ids):].tolist()
        logits = torch.stack(out.logits, dim=1)[0, :len(token_ids)].float()
        scaled = logits / (self.temperature if sampling else 1.0)
        chosen = torch.tensor(token_ids, device=logits.device).unsqueeze(-1)
        logprobs = (scaled.gather(-1, chosen).squeeze(-1) - torch.logsumexp(scaled, dim=-1)).tolist()
        return completion_turn(self.tokenizer, prompt_ids, token_ids, logprobs, self.stop_ids)


def _load(path: str, tokenizer: Any, device: str | None) -> tuple[Any, Any]:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise PolicyError(f"hf policy needs transformers and torch: {exc} (pip install 'enterprise-gym[train]')") \
            from None
    try:
        model = AutoModelForCausalLM.from_pretrained(path)
        tokenizer = tokenizer or AutoTokenizer.from_pretrained(path)
    except OSError as exc:
        raise PolicyError(f"hf policy: cannot load model '{path}': {exc}".replace("\n", " ")) from None
    return model.to(device or "cpu"), tokenizer
