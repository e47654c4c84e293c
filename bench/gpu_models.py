"""Random-weight Qwen2 models for bench/bench_gpu.py, and what the device it runs on can do at best.

No weights can be downloaded on the GPU machine, so the models are built from a
config with the shapes of Qwen2.5-0.5B and 1.5B (tied embeddings, like theirs).
Each shape is also a model builder: `model.builder: bench.gpu_models:QWEN_1_5B`
makes `trainer.model.load_policy` build it, so dtype, LoRA and gradient
checkpointing are applied by the trainer's own code. The tokenizer is always the
toy one (the learner only needs its pad id; the toy task its words).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class QwenShape:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int | None  # None: the toy tokenizer's own (so a random model can still score on the toy task)

    def __call__(self, seed: int) -> tuple[Any, Any]:
        """(model in float32 on the best device, toy tokenizer): the load_policy builder signature."""
        import torch
        from transformers import AutoModelForCausalLM, Qwen2Config

        from trainer.toy import build_toy_tokenizer

        tokenizer = build_toy_tokenizer()
        config = Qwen2Config(
            vocab_size=self.vocab or len(tokenizer),
            hidden_size=self.hidden,
            intermediate_size=self.intermediate,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            num_key_value_heads=self.kv_heads,
            tie_word_embeddings=True,
            bos_token_id=None,
            eos_token_id=None,  # nothing ends a completion early but the tokenizer's own end token
            pad_token_id=tokenizer.pad_token_id,
        )
        # Initialised on the device: a 1.5B random init on the CPU would take much of the time budget.
        device = "cuda" if torch.cuda.is_available() else "cpu"
        with torch.random.fork_rng(), torch.device(device):
            torch.manual_seed(seed)
            model = AutoModelForCausalLM.from_config(config)
        return model, tokenizer


QWEN_0_5B = QwenShape("qwen2.5-0.5b", 896, 24, 14, 2, 4864, 151936)
QWEN_1_5B = QwenShape("qwen2.5-1.5b", 1536, 28, 12, 2, 8960, 151936)
QWEN_0_5B_TOY_VOCAB = replace(QWEN_0_5B, name="qwen2.5-0.5b layers, toy vocabulary", vocab=None)
TINY = QwenShape("tiny", 64, 2, 4, 2, 128, 512)
TINY_TOY_VOCAB = replace(TINY, name="tiny, toy vocabulary", vocab=None)


def builder(name: str) -> str:
    """The `model.builder` string for the shape named `name` here (QWEN_0_5B, TINY, ...)."""
    return f"{__name__}:{name}"


@dataclass(frozen=True)
class Peak:
    """Datasheet peaks: memory bandwidth (bytes/s) and dense bf16 tensor throughput (FLOP/s)."""

    bandwidth: float
    bf16_flops: float


# Substrings of torch.cuda.get_device_name(); other devices get no peak (null in the report).
PEAKS = {
    "H100 80GB HBM3": Peak(3.35e12, 989e12),  # SXM
    "H100 PCIe": Peak(2.0e12, 756e12),
    "H200": Peak(4.8e12, 989e12),
    "A100-SXM4-80GB": Peak(2.0e12, 312e12),
    "A100 80GB PCIe": Peak(2.0e12, 312e12),
}


def device_peak(device_name: str) -> tuple[str | None, Peak | None]:
    """The table's key and entry for this device, or (None, None) when unknown (a CPU, another GPU)."""
    for key, peak in PEAKS.items():
        if key in device_name:
            return key, peak
    return None, None
