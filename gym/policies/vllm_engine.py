"""vLLM, written once: an in-process `vllm.LLM` on a GPU node, for the `vllm` policy and the trainer's sampler.

Never run: vLLM cannot be installed on the machines this was written on, so
only its shape is tested, against a stand-in of vLLM's documented API
(tests/gym/vllm_standin.py).

Only the documented offline API is used: `LLM(model, **engine_args)`,
`LLM.generate` on token-id prompts with one `SamplingParams` per prompt
(`logprobs=0`: the sampled token's own logprob), `LoRARequest` for adapters,
and `LLM.collective_rpc` + `reset_prefix_cache` for new weights. vLLM is
imported when an engine is built, never at import of the gym.

Logprobs are taken after temperature scaling (`logprobs_mode=
"processed_logprobs"`), the quantity the GRPO learner recomputes. The offline
engine batches within one `generate` call, not across threads, so one thread
serves every caller: what is queued while a batch runs goes out together in
the next. Results have the transformers engine's shape (gym.models.engine).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from core.errors import PolicyError
from gym.models.engine import Generation
from gym.models.sampling import SamplingParams


@dataclass
class Prompt:
    """`n` completions of `token_ids`, sampled from `seed` (None: fresh randomness)."""

    token_ids: list[int]
    n: int = 1
    seed: int | None = None


@dataclass
class _Pending:
    prompt: Prompt
    sampling: Any  # vllm.SamplingParams
    future: Future[list[Generation]]


class VLLMEngine:
    def __init__(self, model: str, **engine_args: Any) -> None:
        """`model`: hub id or folder; `engine_args`: `vllm.LLM` keywords (dtype, enable_lora, max_model_len, ...).

        Raises ImportError when vLLM is not installed: each caller says what to do instead.
        """
        if engine_args.get("tensor_parallel_size", 1) == 1:
            # One GPU: keep the engine in this process, so new weights are plain tensor copies.
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        from vllm import LLM

        self.name = model
        self.window: int | None = engine_args.get("max_model_len")
        self.llm = LLM(model=model, **{"logprobs_mode": "processed_logprobs", **engine_args})
        self.lora_request: Any = None
        self._queue: queue.Queue[list[_Pending]] = queue.Queue()
        self._lock = threading.Lock()  # a batch or a weight change, never both at once
        threading.Thread(target=self._serve, name=f"egym-vllm-{model}", daemon=True).start()

    @property
    def tokenizer(self) -> Any:
        return self.llm.get_tokenizer()

    def submit(
        self, prompts: Sequence[Prompt], params: SamplingParams, *, stop_ids: Sequence[int] = ()
    ) -> list[Future[list[Generation]]]:
        """Queue the prompts together (they share a batch); each future resolves to its `n` Generations."""
        from vllm import SamplingParams as VLLMSamplingParams

        pending = [
            _Pending(
                prompt,
                VLLMSamplingParams(
                    n=prompt.n,
                    seed=prompt.seed,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    top_k=params.top_k or -1,  # vLLM's "off"
                    max_tokens=params.max_new_tokens,
                    stop=list(params.stop) or None,
                    include_stop_str_in_output=True,  # as the transformers engine: the stop string is kept
                    stop_token_ids=list(stop_ids) or None,
                    logprobs=0,
                ),
                Future(),
            )
            for prompt in prompts
        ]
        self._queue.put(pending)
        return [p.future for p in pending]

    def use_adapter(self, path: str, adapter_id: int) -> None:
        """Serve the LoRA adapter in `path` from the next batch on.

        `adapter_id` must be > 0 and new for each new adapter, or vLLM keeps serving the one it cached.
        """
        from vllm.lora.request import LoRARequest

        with self._lock:
            self.lora_request = LoRARequest(f"egym-{adapter_id}", adapter_id, path)

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Copy (name, tensor) pairs into the engine's model in place, then drop the KV cached with the old ones."""
        weights = list(weights)
        with self._lock:
            self.llm.collective_rpc(_load_weights, args=(weights,))
            self.llm.reset_prefix_cache()

    def _serve(self) -> None:
        while True:
            batch = self._queue.get()
            while not self._queue.empty():
                batch += self._queue.get_nowait()
            batch = [p for p in batch if p.future.set_running_or_notify_cancel()]  # skip callers gone
            if batch:
                self._run(batch)

    def _run(self, batch: list[_Pending]) -> None:
        try:
            with self._lock:
                outputs = self.llm.generate(
                    [{"prompt_token_ids": p.prompt.token_ids} for p in batch],  # vllm.inputs.TokensPrompt
                    [p.sampling for p in batch],
                    use_tqdm=False,
                    lora_request=self.lora_request,
                )
            results = [
                [generation(c, len(p.prompt.token_ids)) for c in out.outputs]
                for p, out in zip(batch, outputs, strict=True)
            ]
        except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
            error = PolicyError(f"{self.name}: vLLM generation failed: {type(exc).__name__}: {exc}")
            for p in batch:
                p.future.set_exception(error)
            return
        for p, result in zip(batch, results, strict=True):
            p.future.set_result(result)


def _load_weights(worker: Any, weights: list[tuple[str, Any]]) -> None:
    """Runs on each vLLM worker (collective_rpc hands it the worker first).

    `model_runner.model.load_weights` is vLLM's internal path, not its documented API (verl and
    OpenRLHF sync weights the same way): the first thing to check on a real GPU.
    """
    worker.model_runner.model.load_weights(weights=weights)


def generation(output: Any, prompt_tokens: int = 0) -> Generation:
    """A vLLM CompletionOutput (token_ids; logprobs: one {token_id: Logprob} per token) as a Generation."""
    token_ids = list(output.token_ids)
    entries = output.logprobs or []
    if len(entries) != len(token_ids):
        raise PolicyError(
            f"vllm returned {len(entries)} logprob entries for {len(token_ids)} tokens; "
            "sampling must request logprobs=0"
        )
    logprobs = [entry[token].logprob for entry, token in zip(entries, token_ids, strict=True)]
    finish = "length" if output.finish_reason == "length" else "stop"
    return Generation(token_ids, logprobs, finish, prompt_tokens)
