"""The vLLM sampler (GPU nodes): the trainer's config and weight updates over the gym's vLLM engine.

Never run: vLLM cannot be installed where this was written (docs/training.md).
The engine (gym/policies/vllm_engine.py) is the one the `vllm` policy uses;
this module maps `sampler.*` to its arguments and each weight update to what
it loads:
- LoRA: the adapter is written to a fresh folder and served under a new id
  per version (vLLM would keep serving a cached adapter under an old id).
  Megabytes per step.
- Full fine-tune: every tensor is loaded into the engine's model in place and
  the prefix cache reset, since cached KV was computed with the old weights.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from gym.policies.vllm_engine import Prompt, VLLMEngine
from trainer.samplers.base import Completion, Request, WeightUpdate, engine_params

if TYPE_CHECKING:
    from gym.policies.base import Policy
    from trainer.config import SamplingConfig, TrainConfig


class VLLMSampler:
    shares_model = False  # builds its own engine from model.path

    def __init__(self, engine: VLLMEngine, tokenizer: Any) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        # removed when the sampler is collected or the process exits (mkdtemp left one per run in /tmp)
        self._adapters = tempfile.TemporaryDirectory(prefix="egym-lora-")
        self.adapter_root = Path(self._adapters.name)
        self.version = 0

    @classmethod
    def build(cls, config: TrainConfig, tokenizer: Any, model: Any = None) -> VLLMSampler:
        if config.model.path is None:
            raise ConfigError(
                "sampler.backend 'vllm' needs model.path (a model folder or hub id), not a builder"
            )
        lora, s = config.model.lora, config.sampler
        try:
            engine = VLLMEngine(
                config.model.path,
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
            )
        except ImportError:
            raise ConfigError(
                "sampler.backend is 'vllm' but vLLM is not installed (GPU nodes: "
                "pip install 'enterprise-gym[gpu]'); use sampler.backend=hf on CPU"
            ) from None
        return cls(engine, tokenizer)

    def generate(self, requests: Sequence[Request], params: SamplingConfig) -> list[list[Completion]]:
        """All requests go to the engine together, so they share a batch."""
        prompts = [Prompt(list(r.prompt_ids), r.n, r.seed) for r in requests]
        futures = self.engine.submit(prompts, engine_params(params))
        return [
            [Completion(g.token_ids, g.logprobs, g.finish_reason) for g in future.result()]
            for future in futures
        ]

    def sync(self, update: WeightUpdate) -> None:
        if update.is_lora:
            self.engine.use_adapter(self._write_adapter(update), update.version + 1)  # ids start at 1
        else:
            self.engine.load_weights(update.named_tensors().items())
        self.version = update.version

    def _write_adapter(self, update: WeightUpdate) -> str:
        """The adapter as a peft folder (what LoRARequest reads); the one two versions back is removed."""
        from safetensors.torch import save_file

        folder = self.adapter_root / f"v{update.version}"
        folder.mkdir(parents=True, exist_ok=True)
        save_file(
            {k: v.contiguous() for k, v in update.named_tensors().items()},
            str(folder / "adapter_model.safetensors"),
        )
        (folder / "adapter_config.json").write_text(json.dumps(update.lora_config, default=str))
        shutil.rmtree(self.adapter_root / f"v{update.version - 2}", ignore_errors=True)
        return str(folder)

    def chat_policy(self, params: SamplingConfig, seed: int) -> Policy:
        """The gym's own `vllm` policy on this engine (it serves the newest weights)."""
        from gym.policies.vllm import VLLMPolicy

        return VLLMPolicy(
            self.engine,
            tokenizer=self.tokenizer,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,
            max_tokens=params.max_new_tokens,
            seed=seed,
        )
