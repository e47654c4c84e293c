"""Dotted `key=value` overrides, the one parser for every command: `egym train ... loss.clip_high=0.28`,
`egym batch -H faults.rate=0.1 -o temperature=0.7`.

Values are parsed as YAML scalars, so `true`, `3`, `1e-6`, `[a, b]` and `null`
become the types a user would expect; the pydantic model then validates them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from core.errors import ConfigError

FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping at the top of a YAML file; ConfigError naming the file otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def parse_override(item: str, *, where: str = "override") -> tuple[list[str], Any]:
    """`a.b.c=value` -> (["a", "b", "c"], parsed value); `where` names the flag in errors."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
        raise ConfigError(f"{where} '{item}': expected key=value (dotted for nested), e.g. max_turns=20")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str) and FLOAT.fullmatch(value.strip()):
        value = float(value)  # YAML 1.1 reads `1e-6` (no dot) as a string
    return key.strip().split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str], *, where: str = "override") -> dict[str, Any]:
    """A copy of `data` with each override set, creating nested mappings as needed."""
    out = _deep_copy(data)
    for item in overrides:
        path, value = parse_override(item, where=where)
        node = out
        for i, part in enumerate(path[:-1]):
            child = node.setdefault(part, {})
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigError(f"{where} '{item}': '{'.'.join(path[: i + 1])}' is a value, not a section")
            node = child
        node[path[-1]] = value
    return out


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data
