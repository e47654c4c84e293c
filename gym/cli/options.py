"""Options more than one command takes, defined once: one name, one meaning, one default, one help text.

`-o` is `--option` (a policy option, `-o temperature=0.7`) in every command: it is the short
flag users type most, in the docs, the demo and the error messages. Output paths are `--out`,
with no short form. Options with a fixed set of values are `Literal`s, so `--help` lists the
values and anything else is refused with one line naming them.

The functions below turn option values into what the commands run with; heavy imports
happen inside them, so `egym --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import typer

from core.errors import ConfigError
from core.overrides import apply_overrides

# The keys of gym.sandbox.docker_client.CHAT_IMAGES (a test keeps them equal; that module imports docker).
Chat = Literal["compat", "real"]
Split = Literal["train", "val", "test"]

TASKS_HELP = "Task folders (or trees of them), families (acme/product-price, acme/product-price@0-199) or instance ids (acme/product-price-l0-s3)."

STORE = typer.Option(
    None, "--store", help="Run store URL or SQLite path (default $EGYM_STORE or .egym/runs.db)."
)
POLICY = typer.Option(..., "--policy", "-p", help="Policy: oracle, null, openai, hf, ... or module:function.")
MODEL = typer.Option(None, "--model", "-m", help="Model name for model-backed policies.")
OPTION = typer.Option(
    [], "--option", "-o", help="Policy option key=value (value parsed as YAML); repeatable."
)
HARNESS = typer.Option(
    [],
    "--harness",
    "-H",
    help="Harness setting key=value, dotted for nested: -H faults.rate=0.1 -H max_turns=20.",
)
SAMPLES = typer.Option(1, "--samples", "-k", min=1, help="Rollouts per task.")
CONCURRENCY = typer.Option(4, "--concurrency", "-c", min=1, help="Rollouts (sandboxes) running at once.")
EXECUTOR = typer.Option(
    "local",
    "--executor",
    help="Where rollouts run: local (asyncio in this process), ray, or an installed egym.executors plugin.",
)
ADDRESS = typer.Option(None, "--address", help="Ray cluster address (default: start Ray locally).")
JUDGE_SAME_MODEL = typer.Option(
    False, "--judge-same-model", help="Let the policy's own model judge its work."
)
JUDGE_TIMEOUT = typer.Option(None, "--judge-timeout", help="Seconds per judge request (default 60).")
JUDGE_MAX_TOKENS = typer.Option(
    None, "--judge-max-tokens", help="Longest judge verdict in tokens (default 512)."
)
ROLLOUT_FN = typer.Option(
    None, "--rollout-fn", hidden=True, help="module:function replacing gym.rollout:run_rollout."
)
CHAT = typer.Option(
    None,
    "--chat",
    help="Chat server in the sandboxes: compat (egym's, the default) or real (Mattermost, built by "
    "`make mattermost`). Same as EGYM_IMAGE=egym/world:mattermost.",
)
SEEDS = typer.Option(None, "--seeds", help="A family's seeds, e.g. 0-99 or 3,7 (default 0-9).")
LEVELS = typer.Option(None, "--levels", help="A family's levels, e.g. 0 or 0-1 (default: all).")
SPLIT = typer.Option(None, "--split", help="Keep only the train, val or test tasks and instances.")
HOST = typer.Option("127.0.0.1", "--host", help="Address to bind; there is no login, keep it local.")
JSON = typer.Option(
    False, "--json", help="Print one JSON document to stdout instead of tables (notes go to stderr)."
)


def policy_options(policy: str, pairs: list[str], rollout_fn: str | None = None) -> dict[str, Any]:
    """`-o key=value` pairs, checked against what the policy takes before anything starts.

    A custom `--rollout-fn` interprets the policy name itself, so then nothing is checked.
    """
    from gym.policies import check_options

    options = apply_overrides({}, pairs, where="--option")
    if rollout_fn is None:
        check_options(policy, options)
    return options


def harness_settings(pairs: list[str]) -> Any:
    """`-H key=value` pairs (dotted for nested) as a validated gym.harness.HarnessConfig."""
    from gym.harness.config import harness_config

    return harness_config(apply_overrides({}, pairs, where="--harness"), where="--harness")


def judge_options(same_model: bool, timeout_s: float | None, max_tokens: int | None) -> Any:
    """The judge flags as JudgeOptions, refused by name when out of range."""
    from pydantic import ValidationError

    from grader.judge import JudgeOptions

    try:
        return JudgeOptions(allow_same_model=same_model, timeout_s=timeout_s, max_tokens=max_tokens)
    except ValidationError as exc:
        first = exc.errors()[0]
        flag = {"timeout_s": "--judge-timeout", "max_tokens": "--judge-max-tokens"}.get(
            str(first["loc"][0]), "judge"
        )
        raise ConfigError(f"{flag} {first['input']}: {first['msg']}") from None


def open_store(url: str | None) -> Any:
    """`--store` as a gym.store.Store."""
    from gym.store import Store

    return Store(url)


def select_tasks(
    paths: list[Path] | list[str],
    seeds: str | None = None,
    levels: str | None = None,
    split: Split | None = None,
) -> list[Any]:
    """Task folders, families (acme/product-price) and instance ids (acme/product-price-l0-s3), maybe of one split."""
    from core.errors import TaskError
    from gym.task_refs import resolve

    found = resolve(list(paths), seeds=seeds, levels=levels)
    kept = [t for t in found if split is None or t.split == split]
    if not kept:
        raise TaskError(
            f"none of the {len(found)} task(s) in {', '.join(map(str, paths))} is in the {split} split"
        )
    return kept


def use_chat(chat: Chat | None) -> None:
    """`--chat`: imported when used (the docker SDK is slow to import)."""
    from gym.sandbox.docker_client import select_chat

    select_chat(chat)


def check_executor(name: str) -> None:
    """`--executor`, refused (with the closest name) before any task is resolved or rollout started."""
    from gym.batch.executors import EXECUTORS

    EXECUTORS.target(name)
