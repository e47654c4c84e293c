"""Print a fingerprint of the bits this machine's CPU kernels compute: one forward and backward pass of
a two-layer model of SmolLM2-135M's shapes (random weights, fixed seeds) under the caller's environment
(bench.common.pin_numerics), the SHA-256 of its gradients. A machine that prints another fingerprint
than the one that trained an SFT model cannot train it again from the same data (its MKL takes another
code path: on 2026-12-02 an Intel Xeon under the AVX2 pins trained other weights than the AMD EPYCs
did); printing the same is needed, not proof, so the SFT model's key still decides. Seconds, against
the SFT's hour: bench_learning checks it before training."""

from __future__ import annotations

import hashlib

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def fingerprint() -> str:
    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=576,
        intermediate_size=1536,
        num_attention_heads=9,
        num_key_value_heads=3,
        vocab_size=49152,
        num_hidden_layers=2,  # SmolLM2-135M has 30 of these: its matrix shapes, in seconds
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    ids = torch.randint(0, config.vocab_size, (2, 96), generator=torch.Generator().manual_seed(1))
    model(input_ids=ids, labels=ids).loss.backward()
    digest = hashlib.sha256()
    for parameter in model.parameters():
        digest.update(parameter.grad.numpy().tobytes())
    return digest.hexdigest()[:16]


if __name__ == "__main__":
    print(fingerprint())
