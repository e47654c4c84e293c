"""Moving policy weights between the learner, samplers and checkpoints.

For a LoRA run only the adapter moves (megabytes, not gigabytes); for a full
fine-tune every weight does.
"""

from __future__ import annotations

from typing import Any

import torch


def is_peft(model: Any) -> bool:
    """True for a peft-wrapped model (checked without importing peft for plain models)."""
    if not type(model).__module__.startswith("peft"):
        return False
    from peft import PeftModel

    return isinstance(model, PeftModel)


def export_weights(model: Any) -> dict[str, torch.Tensor]:
    """CPU copies of the trainable state: the adapter for LoRA, the whole state dict otherwise."""
    if is_peft(model):
        from peft import get_peft_model_state_dict

        state = get_peft_model_state_dict(model)
    else:
        state = model.state_dict()
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in state.items()}


def import_weights(model: Any, tensors: dict[str, torch.Tensor]) -> None:
    """Load what `export_weights` produced into a model of the same architecture (and adapter)."""
    with torch.no_grad():
        if is_peft(model):
            from peft import set_peft_model_state_dict

            result = set_peft_model_state_dict(model, tensors)
            unexpected = getattr(result, "unexpected_keys", [])
            if unexpected:
                raise ValueError(f"adapter weights do not match the model: unexpected {unexpected[:3]}")
        else:
            model.load_state_dict(tensors, strict=True)


def lora_config_dict(model: Any) -> dict[str, Any] | None:
    """The active adapter's peft config as a JSON-able dict, or None for a full fine-tune."""
    if not is_peft(model):
        return None
    config = model.peft_config[model.active_adapter]
    return _jsonable(config.to_dict())


def _jsonable(value: Any) -> Any:
    """peft configs hold sets and enums; adapter_config.json needs lists and strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return getattr(value, "value", str(value))
