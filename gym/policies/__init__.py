"""Policies by name, imported only when used: `make_policy("openai", model="gpt-4o-mini")`.

A name is a key of POLICIES or a `module:attribute` entry point. Policies that
replay or script a particular task (`oracle`, cheat policies) are marked
`per_task`: they receive `task=`; the others never see it, so a caller can
always pass the task.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any

from core.errors import PolicyError
from gym.policies.base import CountsTokens, Policy, Summarizes


@dataclass(frozen=True)
class PolicyEntry:
    target: str  # "module:attribute"
    per_task: bool = False
    extra: str = ""  # the pip extra that provides its dependencies


POLICIES: dict[str, PolicyEntry] = {
    "openai": PolicyEntry("gym.policies.openai_chat:OpenAIPolicy"),
    "hf": PolicyEntry("gym.policies.hf:HFPolicy", extra="train"),
    "vllm": PolicyEntry("gym.policies.vllm_engine:VLLMPolicy", extra="gpu"),
    "oracle": PolicyEntry("gym.policies.oracle:OraclePolicy", per_task=True),
    "null": PolicyEntry("gym.policies.null:NullPolicy"),
}


def register_policy(name: str, target: str, *, per_task: bool = False) -> None:
    """Add a policy under `name` (call it from your own code, not at import of a library module)."""
    POLICIES[name] = PolicyEntry(target, per_task)


def policy_names() -> list[str]:
    return sorted(POLICIES)


def _entry(name: str) -> PolicyEntry:
    if name in POLICIES:
        return POLICIES[name]
    if ":" in name:
        return PolicyEntry(name, per_task=False)
    close = difflib.get_close_matches(name, POLICIES, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise PolicyError(f"unknown policy '{name}': {hint}known policies: {', '.join(policy_names())} "
                      "(or give a 'module:Class' entry point)")


def load_policy_class(name: str) -> Any:
    entry = _entry(name)
    module_name, _, attribute = entry.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        extra = f" (pip install 'enterprise-gym[{entry.extra}]')" if entry.extra else ""
        raise PolicyError(f"policy '{name}' could not be imported: {exc}{extra}") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise PolicyError(f"policy '{name}': {module_name} has no attribute '{attribute}'") from None


def make_policy(name: str, *, task: Any = None, **options: Any) -> Policy:
    """Build a policy. `task` goes only to per-task policies (oracle); `options` to the constructor."""
    entry = _entry(name)
    cls = load_policy_class(name)
    if entry.per_task:
        if task is None:
            raise PolicyError(f"policy '{name}' replays a task: pass task=...")
        options["task"] = task
    try:
        return cls(**options)
    except TypeError as exc:
        raise PolicyError(f"policy '{name}': bad options {sorted(options)}: {exc}") from None


__all__ = ["POLICIES", "CountsTokens", "Policy", "PolicyEntry", "Summarizes", "load_policy_class",
           "make_policy", "policy_names", "register_policy"]
