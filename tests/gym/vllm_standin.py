"""A stand-in for the part of vLLM's documented offline API that gym.policies.vllm_engine uses.

vLLM cannot be installed on the machines these tests run on (it needs CUDA, and
its wheel is far too large to carry to the GPU machine), so the adapter is
tested against this instead. It implements only the documented signatures the
adapter calls, so a misspelt or unknown argument fails here as it would there:

- `vllm.LLM(model, **engine_args)`: `generate(prompts, sampling_params,
  use_tqdm, lora_request)` returning RequestOutputs (`.outputs`: CompletionOutputs
  with `token_ids`, `logprobs` as one {token_id: Logprob} per token when
  `logprobs` is set, else None, and `finish_reason`), `collective_rpc(method,
  timeout, args, kwargs)` (a callable gets the worker first),
  `reset_prefix_cache()`, `get_tokenizer()`;
- `vllm.SamplingParams(**fields)`; `vllm.lora.request.LoRARequest(lora_name,
  lora_int_id, lora_path)`.

The worker handed to a `collective_rpc` callable is vLLM's own internal object;
here it has only `model_runner.model.load_weights`, the path the adapter
assumes. Generation is scripted (`LLM.script`) or seeded random tokens. None of
this shows that the real engine works: docs/training.md says it has never run.
"""

from __future__ import annotations

import random
import sys
import types
from dataclasses import dataclass
from typing import Any

TOKENIZERS: dict[str, Any] = {}  # model name -> what get_tokenizer() returns
VOCAB = 50


@dataclass(kw_only=True)
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop: list[str] | None = None
    stop_token_ids: list[int] | None = None
    include_stop_str_in_output: bool = False
    max_tokens: int | None = 16
    logprobs: int | None = None


@dataclass
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    token_ids: list[int]
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


class _Model:
    def __init__(self) -> None:
        self.loaded: list[list[tuple[str, Any]]] = []

    def load_weights(self, weights: Any) -> None:
        self.loaded.append(list(weights))


class LLM:
    built: list[LLM] = []  # every engine made, newest last

    def __init__(self, model: str, **engine_args: Any) -> None:
        self.model, self.engine_args = model, engine_args
        self.script: list[int] | None = None  # tokens every completion writes, instead of random ones
        self.calls: list[dict[str, Any]] = []  # each generate's prompts, params and adapter
        self.prefix_resets = 0
        self.worker = types.SimpleNamespace(model_runner=types.SimpleNamespace(model=_Model()))
        LLM.built.append(self)

    def get_tokenizer(self) -> Any:
        return TOKENIZERS[self.model]

    def generate(
        self,
        prompts: Any,
        sampling_params: SamplingParams | list[SamplingParams] | None = None,
        *,
        use_tqdm: bool = True,
        lora_request: LoRARequest | None = None,
    ) -> list[RequestOutput]:
        params = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
        self.calls.append({"prompts": prompts, "params": params, "lora_request": lora_request})
        return [
            RequestOutput(
                p["prompt_token_ids"], [self._complete(p["prompt_token_ids"], s, i) for i in range(s.n)]
            )
            for p, s in zip(prompts, params, strict=True)
        ]

    def _complete(self, prompt: list[int], params: SamplingParams, index: int) -> CompletionOutput:
        rng = random.Random(f"{params.seed}/{index}/{prompt}") if params.seed is not None else random.Random()
        tokens, finish = [], "length"
        for position in range(params.max_tokens or 16):
            token = (
                self.script[position] if self.script and position < len(self.script) else rng.randrange(VOCAB)
            )
            tokens.append(token)
            if token in (params.stop_token_ids or []):
                finish = "stop"
                break
        logprobs = None
        if params.logprobs is not None:
            logprobs = [{t: Logprob(-0.1 * (i + 1), rank=1)} for i, t in enumerate(tokens)]
        return CompletionOutput(index, tokens, logprobs, finish)

    def collective_rpc(
        self,
        method: Any,
        timeout: float | None = None,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> list[Any]:
        return [method(self.worker, *args, **(kwargs or {}))]

    def reset_prefix_cache(self) -> bool:
        self.prefix_resets += 1
        return True


def install(monkeypatch: Any) -> type[LLM]:
    """Put the stand-in under `vllm` in sys.modules for one test; returns its LLM class."""
    LLM.built.clear()
    vllm = types.ModuleType("vllm")
    vllm.LLM, vllm.SamplingParams = LLM, SamplingParams
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")
    request.LoRARequest = LoRARequest
    for name, module in {"vllm": vllm, "vllm.lora": lora, "vllm.lora.request": request}.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv(
        "VLLM_ENABLE_V1_MULTIPROCESSING", "0"
    )  # the adapter sets it; keep it out of other tests
    return LLM
