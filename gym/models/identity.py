"""Which model a difficulty band describes: a readable key naming the model and, for local weights, their fingerprint.

A band is only true of the model it was measured with (a level too hard for a 135M model is too
easy for a 7B one), so task.yaml and families/bands.yaml keep one band per model key:

| key                              | model                                                          |
| -------------------------------- | -------------------------------------------------------------- |
| `hf:smollm2@1a2b3c4d5e6f`        | local weights (a bundled name, a .gguf file or a transformers   |
|                                  | folder), served by the hf or vllm policy alike, and what the    |
|                                  | trainer's `model.path` names; after the `@`, their fingerprint  |
| `hf:HuggingFaceTB/SmolLM2-135M`  | a Hugging Face id that is no local path (keyed by its name)     |
| `openai:gpt-4o-mini@api.openai.com/v1` | an OpenAI-compatible endpoint: its model name and base URL |
| `builder:toy`                    | a trainer `model.builder` (tests and demos; never calibrated)   |
| `oracle`, `null`, ...            | a policy without a model: its name                              |
| `unknown`                        | a band written before bands named their model                   |

A folder's name is its own, except egym's `model` folders (`<sft output>/model`,
`step-000050/model`), which take their parent's too: `hf:sft-l0/model@...`. The fingerprint covers the
weight files' names and sizes and the first and last MiB of each, so it is cheap on a 7B model and changes
whenever the weights do (a tokenizer or README edit leaves it alone). The same weights under another name
or path give another key: calibrate and train with the same model reference.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urlsplit

from gym.models.store import BUNDLED, DEFAULT_MODEL, bundled_gguf, models_dir

UNKNOWN = "unknown"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
EDGE = 1 << 20  # bytes hashed at each end of a weight file


def fingerprint(path: Path) -> str:
    """sha256 over each weight file's name, size and first and last MiB (`path` a file or a model folder)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in WEIGHT_SUFFIXES)
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        with file.open("rb") as handle:
            head = handle.read(EDGE)
            handle.seek(max(size - EDGE, 0))
            tail = handle.read(EDGE)
        name = file.name if file == path else file.relative_to(path).as_posix()
        digest.update(f"{name}\0{size}\0".encode() + hashlib.sha256(head + tail).digest())
    return digest.hexdigest()


def local_model_key(ref: str | None) -> str:
    """The key of a model reference as the hf and vllm policies and the trainer's `model.path` take it."""
    ref = ref or DEFAULT_MODEL
    if ref in BUNDLED:
        return f"hf:{ref}@{fingerprint(bundled_gguf(ref))[:12]}"
    path = Path(ref)
    if not path.exists() and (models_dir() / ref).is_dir():
        path = models_dir() / ref
    if not path.exists():
        return f"hf:{ref}"
    path = path.resolve()
    name = path.stem if path.is_file() else path.name
    if path.is_dir() and path.name == "model":  # egym writes every trained model to a folder named model
        name = f"{path.parent.name}/{name}"
    return f"hf:{name}@{fingerprint(path)[:12]}"


def endpoint_key(model: str, base_url: str) -> str:
    """The key of a model served by an OpenAI-compatible endpoint: its name and the base URL without scheme."""
    url = urlsplit(base_url)
    return f"openai:{model}@{url.netloc}{url.path.rstrip('/')}"
