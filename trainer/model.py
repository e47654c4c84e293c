"""Load the policy being trained: from a path or a builder, optionally wrapped in a LoRA adapter.

`model.dtype` is the compute dtype. A full fine-tune keeps float32 weights, the
master copy AdamW updates (on bfloat16 weights an lr-1e-6 update mostly rounds
away), and computes in `model.dtype` under autocast (gym.models.device). A LoRA
run keeps its frozen base in `model.dtype` and its adapter in float32 (peft's
default). float16 runs without loss scaling: prefer bfloat16.
"""

from __future__ import annotations

from typing import Any

import torch

from core.errors import ConfigError
from gym.models.device import best_device, set_compute_dtype
from trainer.config import LoraConfig, ModelConfig

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": "auto"}


def load_policy(config: ModelConfig, seed: int, device: torch.device | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) ready to train: dropout off, LoRA applied if configured, on `device` (default:
    the GPU when there is one), computing in `config.dtype`."""
    full = not config.lora.enabled
    # "auto" loads the checkpoint's own dtype (the compute dtype), which a full fine-tune upcasts exactly
    load_dtype = torch.float32 if full and config.dtype != "auto" else DTYPES[config.dtype]
    model, tokenizer = _load_base(config, seed, load_dtype)
    compute = next(model.parameters()).dtype if config.dtype == "auto" else DTYPES[config.dtype]
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    _disable_dropout(model)
    if full:
        model.float()
    else:
        model = _with_lora(model, config.lora, seed)
    if compute != torch.float32:
        set_compute_dtype(model, compute)
    if config.gradient_checkpointing:
        # transformers 5.23 renamed it (the old name warns, and goes in v6); GPU images ship older ones
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if config.lora.enabled:
            model.enable_input_require_grads()
    return model.to(device or best_device()), tokenizer


def load_tokenizer(config: ModelConfig, seed: int) -> Any:
    """Only the tokenizer (for processes that render prompts but hold no weights)."""
    if config.builder:
        return _load_base(config, seed, "auto")[1]
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            model_source(config.path), trust_remote_code=config.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"model.path '{config.path}': cannot load the tokenizer ({exc})".splitlines()[0]
        ) from None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def model_source(path: str) -> str:
    """A local model egym knows (`smollm2`, a .gguf file, a name under .egym/models) as its folder; else `path`
    unchanged (a folder, or a Hugging Face id in the cache)."""
    from gym.models.store import BUNDLED, is_model_folder, models_dir, resolve_model

    if path in BUNDLED or path.lower().endswith(".gguf") or is_model_folder(models_dir() / path):
        return str(resolve_model(path))
    return path


def model_key(config: ModelConfig) -> str:
    """The key this model's difficulty bands are stored under (gym.models.identity): what the curriculum reads."""
    from gym.models.identity import local_model_key

    return local_model_key(config.path) if config.path else f"builder:{config.builder}"


def _load_base(config: ModelConfig, seed: int, dtype: torch.dtype | str) -> tuple[Any, Any]:
    """The model in `dtype` ('auto': as the checkpoint or builder has it) and its tokenizer."""
    if config.builder:
        from trainer.registry import MODEL_BUILDERS

        model, tokenizer = MODEL_BUILDERS.load(config.builder)(seed)
        return model.to(dtype) if dtype != "auto" else model, tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = model_source(config.path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=config.trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=dtype, trust_remote_code=config.trust_remote_code
        )
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"model.path '{config.path}': cannot load ({first}); check the id or folder"
        ) from None
    return model, tokenizer


def _disable_dropout(model: Any) -> None:
    """Dropout would make the learner's logprobs differ from the sampler's for the same weights."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    for key in ("attention_dropout", "hidden_dropout", "dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop"):
        if isinstance(getattr(model.config, key, None), float):
            setattr(model.config, key, 0.0)


def _with_lora(model: Any, lora: LoraConfig, seed: int) -> Any:
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model

    peft_config = PeftLoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return get_peft_model(model, peft_config)
