"""Model keys: a fingerprint that follows the weights, endpoint keys, and the key of each kind of policy."""

from __future__ import annotations

from pathlib import Path

from gym.models.identity import EDGE, endpoint_key, fingerprint, local_model_key
from gym.policies import model_key


def _model(folder: Path, weights: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / "tokenizer.json").write_text('{"v": 1}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_the_fingerprint_changes_with_the_weights_and_not_with_other_files(tmp_path):
    weights = bytes(range(256)) * (3 * EDGE // 256)  # 3 MiB: a middle the fingerprint does not read
    folder = _model(tmp_path / "m", weights)
    key = local_model_key(str(folder))
    assert key.startswith("hf:m@") and len(key.split("@")[1]) == 12
    (folder / "tokenizer.json").write_text('{"v": 2}')
    (folder / "README.md").write_text("notes")
    assert local_model_key(str(folder)) == key
    for changed in (weights[:-1] + b"\0", b"\xff" + weights[1:], weights + b"\0"):  # last MiB, first, size
        (folder / "model.safetensors").write_bytes(changed)
        assert local_model_key(str(folder)) != key
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "adapter_model.safetensors").write_bytes(b"lora")  # another weight file counts
    assert local_model_key(str(folder)) != key


def test_keys_name_the_model_readably(tmp_path):
    weights = _model(tmp_path / "runs" / "sft-l0" / "model", b"w")
    assert local_model_key(str(weights)).startswith(
        "hf:sft-l0/model@"
    )  # egym's model folders keep their parent
    gguf = tmp_path / "tiny.Q4.gguf"
    gguf.write_bytes(b"gguf")
    assert local_model_key(str(gguf)) == f"hf:tiny.Q4@{fingerprint(gguf)[:12]}"
    assert local_model_key("HuggingFaceTB/SmolLM2-135M-Instruct") == "hf:HuggingFaceTB/SmolLM2-135M-Instruct"
    assert endpoint_key("gpt-4o-mini", "https://api.openai.com/v1/") == "openai:gpt-4o-mini@api.openai.com/v1"


def test_each_policy_is_keyed_by_its_model_or_its_name(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    folder = _model(tmp_path / "m", b"w")
    assert model_key("hf", {"model": str(folder)}) == local_model_key(str(folder))
    assert model_key("vllm", {"model": str(folder)}) == local_model_key(str(folder))
    assert model_key("openai", {"model": "gpt-4o-mini"}) == "openai:gpt-4o-mini@api.openai.com/v1"
    assert (
        model_key("openai", {"model": "m", "base_url": "http://localhost:8000/v1"})
        == "openai:m@localhost:8000/v1"
    )
    assert model_key("oracle", {}) == "oracle" and model_key("null", {}) == "null"
    assert model_key("known-rate", {}) == "known-rate"  # a name only a custom --rollout-fn reads
