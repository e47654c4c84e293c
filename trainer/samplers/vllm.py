"""In-process vLLM engine for GPU nodes. vLLM is imported only when this sampler is built.

Weight sync after each optimizer step:
- LoRA: the adapter is written to a fresh folder and used through a new
  `LoRARequest` (a new id per version, so vLLM never serves a stale cached
  adapter). Megabytes per step.
- Full fine-tune: every tensor is loaded in place into the engine's model
  (`model.load_weights`, run on the engine's worker through `collective_rpc`)
  and the prefix cache is reset, since cached KV was computed with old weights.

Concurrent `generate` calls (many rollouts in flight, each waiting on its next
turn) are queued and served together by one thread: vLLM's offline engine
batches within a call, not across threads.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from trainer.samplers.base import Completion, Request, WeightUpdate


def _load_weights(worker: Any, weights: list[tuple[str, Any]]) -> None:
    """Runs on the vLLM worker: copy the new tensors into the engine's model."""
    worker.model_runner.model.load_weights(weights=weights)


class VLLMSampler:
    def __init__(self, config: Any, tokenizer: Any) -> None:
        if config.sampler.tensor_parallel_size == 1:
            # One GPU: keep the engine in this process, so weight loads are plain tensor copies.
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            from vllm import LLM
        except ImportError:
            raise ConfigError(
                "sampler.backend is 'vllm' but vLLM is not installed (GPU nodes: "
                "pip install 'enterprise-gym[gpu]'); use sampler.backend=hf on CPU"
            ) from None
        if config.model.path is None:
            raise ConfigError(
                "sampler.backend 'vllm' needs model.path (a model folder or hub id), not a builder"
            )
        self.config = config
        self.tokenizer = tokenizer
        lora = config.model.lora
        s = config.sampler
        self.llm = LLM(
            model=config.model.path,
            dtype="auto" if config.model.dtype in ("auto", "float32") else config.model.dtype,
            tensor_parallel_size=s.tensor_parallel_size,
            gpu_memory_utilization=s.gpu_memory_utilization,
            max_model_len=s.max_model_len,
            enforce_eager=s.enforce_eager,
            enable_prefix_caching=s.enable_prefix_caching,
            enable_lora=lora.enabled,
            max_lora_rank=lora.r if lora.enabled else 16,
            seed=config.seed,
            trust_remote_code=config.model.trust_remote_code,
            # logprobs after temperature scaling: the quantity the learner recomputes
            logprobs_mode="processed_logprobs",
        )
        self.lora_request: Any = None
        self.adapter_root = Path(tempfile.mkdtemp(prefix="egym-lora-"))
        self.version = 0
        self._queue: queue.Queue[tuple[Request, Any, Future]] = queue.Queue()
        self._lock = threading.Lock()  # generate vs. weight loads
        threading.Thread(target=self._serve, daemon=True, name="vllm-batcher").start()

    # -- generation -----------------------------------------------------

    def generate(self, requests: Sequence[Request], params: Any) -> list[list[Completion]]:
        futures = []
        for request in requests:
            future: Future = Future()
            self._queue.put((request, params, future))
            futures.append(future)
        return [future.result() for future in futures]

    def _serve(self) -> None:
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                results = self._generate_batch(batch)
            except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
                for *_, future in batch:
                    future.set_exception(exc)
                continue
            for (*_, future), result in zip(batch, results, strict=True):
                future.set_result(result)

    def _generate_batch(self, batch: list[tuple[Request, Any, Future]]) -> list[list[Completion]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        prompts = [TokensPrompt(prompt_token_ids=list(request.prompt_ids)) for request, _, _ in batch]
        sampling = [
            SamplingParams(
                n=request.n,
                temperature=p.temperature,
                top_p=p.top_p,
                top_k=p.top_k or -1,
                max_tokens=p.max_new_tokens,
                logprobs=0,
                seed=request.seed,
            )
            for request, p, _ in batch
        ]
        with self._lock:
            outputs = self.llm.generate(prompts, sampling, lora_request=self.lora_request, use_tqdm=False)
        return [[_completion(o) for o in out.outputs] for out in outputs]

    # -- weights --------------------------------------------------------

    def sync(self, update: WeightUpdate) -> None:
        with self._lock:
            if update.is_lora:
                self._load_adapter(update)
            else:
                weights = list(update.named_tensors().items())
                self.llm.collective_rpc(_load_weights, args=(weights,))
                self.llm.reset_prefix_cache()
            self.version = update.version

    def _load_adapter(self, update: WeightUpdate) -> None:
        import json

        from safetensors.torch import save_file
        from vllm.lora.request import LoRARequest

        folder = self.adapter_root / f"v{update.version}"
        folder.mkdir(parents=True, exist_ok=True)
        save_file(
            {k: v.contiguous() for k, v in update.named_tensors().items()},
            str(folder / "adapter_model.safetensors"),
        )
        (folder / "adapter_config.json").write_text(json.dumps(update.lora_config, default=str))
        # ids must be > 0 and new for each version, or vLLM keeps serving its cached adapter
        self.lora_request = LoRARequest(f"egym-v{update.version}", update.version + 1, str(folder))
        old = self.adapter_root / f"v{update.version - 2}"
        if old.exists():
            import shutil

            shutil.rmtree(old, ignore_errors=True)

    def chat_policy(self, params: Any, seed: int) -> Any:
        from trainer.samplers.chat import SamplerChatPolicy

        return SamplerChatPolicy(self, self.tokenizer, params, seed=seed, name="vllm")


def _completion(output: Any) -> Completion:
    """vLLM CompletionOutput -> Completion (logprob of each sampled token)."""
    token_ids = list(output.token_ids)
    logprobs = [entry[token].logprob for token, entry in zip(token_ids, output.logprobs, strict=True)]
    finish = "length" if output.finish_reason == "length" else "stop"
    return Completion(token_ids, logprobs, finish)
