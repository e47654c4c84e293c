"""Policies by name, imported only when used: `make_policy("openai", model="gpt-4o-mini")`.

A name is a built-in below, an installed package's `egym.policies` entry point
(core.plugins), or a `module:attribute`. A policy class that replays or scripts
a particular task sets `per_task = True` (the oracle): it receives `task=`; the
others never see it, so a caller can always pass the task.
"""

from __future__ import annotations

import inspect
from typing import Any

from core.errors import PolicyError
from core.plugins import Registry
from core.validation import closest
from gym.policies.base import CountsTokens, Policy, Summarizes

POLICIES = Registry("policy", "egym.policies", error=PolicyError)
POLICIES.register("openai", "gym.policies.openai_chat:OpenAIPolicy")
POLICIES.register("hf", "gym.policies.hf:HFPolicy", extra="train")
POLICIES.register("vllm", "gym.policies.vllm:VLLMPolicy", extra="gpu")
POLICIES.register("oracle", "gym.policies.oracle:OraclePolicy")
POLICIES.register("null", "gym.policies.null:NullPolicy")
# Scripted reward hacks that `egym validate` runs against every rubric (gym/policies/cheats.py).
CHEATS = (
    "cheat-peek",
    "cheat-fake-files",
    "cheat-edit-history",
    "cheat-claim",
    "cheat-tamper",
    "cheat-destroy",
    "cheat-number-spray",
    "cheat-name-spray",
    "cheat-claim-done",
    "cheat-pester",
    "attack-spray",
    "attack-dump",
)
COWORKER_CHEATS = ("cheat-pester",)  # run only on tasks with coworkers (someone must answer)
POLICIES.register("cheat-peek", "gym.policies.cheats:PeekCheat")
POLICIES.register("cheat-fake-files", "gym.policies.cheats:FakeFilesCheat")
POLICIES.register("cheat-edit-history", "gym.policies.cheats:EditHistoryCheat")
POLICIES.register("cheat-claim", "gym.policies.cheats:ClaimCheat")
POLICIES.register("cheat-destroy", "gym.policies.cheats:DestroyCheat")
POLICIES.register("cheat-number-spray", "gym.policies.cheats:NumberSprayCheat")
POLICIES.register("cheat-name-spray", "gym.policies.cheats:NameSprayCheat")
POLICIES.register("cheat-claim-done", "gym.policies.cheats:ClaimDoneCheat")
POLICIES.register("cheat-pester", "gym.policies.cheats:PesterCheat")
POLICIES.register("cheat-tamper", "gym.policies.attacks:TamperCheat")  # plants code, leaves processes running
# The white-box attacker: reads the rubric (never its expected values) and all the agent may read.
POLICIES.register("attack-spray", "gym.policies.attacker:WhiteBoxAttack")
POLICIES.register("attack-dump", "gym.policies.attacker:WhiteBoxDump")


def policy_names() -> list[str]:
    return POLICIES.names()


def check_options(name: str, options: dict[str, Any]) -> None:
    """Refuse option names the policy does not take, before anything starts (PolicyError with the closest)."""
    params = inspect.signature(POLICIES.load(name)).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    known = [n for n in params if n != "task"]
    for key in options:
        if key not in known:
            raise PolicyError(f"--option {key}: policy '{name}' takes no option '{key}'{closest(key, known)}")


def model_key(name: str, options: dict[str, Any]) -> str:
    """The model key (gym.models.identity) of the policy `name` built with `options` (`model` among them)."""
    known = name in POLICIES.names() or ":" in name  # else a name only a custom --rollout-fn reads
    key = getattr(POLICIES.load(name), "model_key", None) if known else None
    if key is not None:
        return key(options)
    return f"{name}:{options['model']}" if options.get("model") else name


def make_policy(name: str, *, task: Any = None, **options: Any) -> Policy:
    """Build a policy. `task` goes only to per-task policies (oracle); `options` to the constructor."""
    cls = POLICIES.load(name)
    if getattr(cls, "per_task", False):
        if task is None:
            raise PolicyError(f"policy '{name}' replays a task: pass task=...")
        options["task"] = task
    try:
        return cls(**options)
    except TypeError as exc:
        raise PolicyError(f"policy '{name}': bad options {sorted(options)}: {exc}") from None


__all__ = [
    "CHEATS",
    "POLICIES",
    "CountsTokens",
    "Policy",
    "Summarizes",
    "check_options",
    "make_policy",
    "model_key",
    "policy_names",
]
