"""Rollouts at scale: `egym rollout`, `batch`, `runs`, `show`, `validate`, `calibrate`, `export`.

Commands stay thin: they parse options, call gym.batch / gym.validate /
gym.calibrate / gym.export, and print with rich.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console

from core.errors import ConfigError
from core.overrides import apply_overrides
from gym.cli.errors import friendly

T = TypeVar("T")
console = Console()

STORE = typer.Option(
    None, "--store", help="Run store URL or SQLite path (default $EGYM_STORE or .egym/runs.db)."
)
TASKS_HELP = "Task folders (or trees of them), families (acme/product-price, acme/product-price@0-199) or instance ids (acme/product-price-l0-s3)."
POLICY = typer.Option(..., "--policy", "-p", help="Policy: oracle, null, openai, hf, ... or module:function.")
MODEL = typer.Option(None, "--model", "-m", help="Model name for model-backed policies.")
OPTIONS = typer.Option(
    [], "--option", "-o", help="Policy option key=value (value parsed as YAML); repeatable."
)
HARNESS = typer.Option(
    [],
    "--harness",
    "-H",
    help="Harness setting key=value, dotted for nested: -H faults.rate=0.1 -H max_turns=20.",
)
EXECUTOR = typer.Option("local", "--executor", help="local (asyncio) or ray.")
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


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, with SIGTERM cancelling like Ctrl-C does so the batch can clean up."""

    async def main() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        return await coro

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        console.print("[yellow]interrupted[/]: run the same command again to finish what is missing")
        raise typer.Exit(130) from None


def _store(url: str | None):
    from gym.store import Store

    return Store(url)


CHAT = typer.Option(
    None,
    "--chat",
    help="Chat server in the sandboxes: compat (egym's, the default) or real (Mattermost, built by "
    "`make images`). Same as EGYM_IMAGE=egym/world:mattermost.",
)
SEEDS = typer.Option(None, "--seeds", help="A family's seeds, e.g. 0-99 or 3,7 (default 0-9).")
LEVELS = typer.Option(None, "--levels", help="A family's levels, e.g. 0 or 0-1 (default: all).")
SPLIT = typer.Option(None, "--split", help="Keep only the train, val or test tasks and instances.")


def _tasks(paths: list[Path], seeds: str | None = None, levels: str | None = None, split: str | None = None):
    """Task folders, families (acme/product-price) and instance ids (acme/product-price-l0-s3), maybe of one split."""
    from core.errors import TaskError
    from gym.families import resolve

    if split not in (None, "train", "val", "test"):
        raise TaskError(f"--split {split!r}: expected train, val or test")
    found = resolve(list(paths), seeds=seeds, levels=levels)
    kept = [t for t in found if split is None or t.split == split]
    if not kept:
        raise TaskError(
            f"none of the {len(found)} task(s) in {', '.join(map(str, paths))} is in the {split} split"
        )
    return kept


def use_chat(chat: str | None) -> None:
    """`--chat`: imported when used (the docker SDK is slow to import)."""
    from gym.sandbox.docker_client import select_chat as select

    select(chat)


def register(app: typer.Typer) -> None:
    for command in (rollout, batch, runs, show, validate, calibrate, export):
        app.command(name=command.__name__)(friendly(command))


def rollout(
    task: Path = typer.Argument(
        ..., help="Task folder (tasks/<world>/<task-id>) or instance id (acme/product-price-l0-s3)."
    ),
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTIONS,
    harness: list[str] = HARNESS,
    sample: int = typer.Option(0, "--sample", help="Sample index."),
    run: str | None = typer.Option(
        None, "--run", help="Run name to store the rollout under (default: a new run)."
    ),
    judge_same_model: bool = JUDGE_SAME_MODEL,
    judge_timeout: float | None = JUDGE_TIMEOUT,
    judge_max_tokens: int | None = JUDGE_MAX_TOKENS,
    store: str | None = STORE,
    rollout_fn: str | None = ROLLOUT_FN,
    chat: str | None = CHAT,
) -> None:
    """Run one episode with a live view of its turns, then print the rubric breakdown."""
    use_chat(chat)
    from gym.batch.single import run_single

    judge = judge_options(judge_same_model, judge_timeout, judge_max_tokens)
    row = run_async(
        run_single(
            _store(store),
            _tasks([task])[0],
            policy=policy,
            model=model,
            options=policy_options(policy, option, rollout_fn),
            harness=harness_settings(harness),
            sample=sample,
            run_id=run,
            judge=judge,
            rollout_fn=rollout_fn,
            console=console,
        )
    )
    raise typer.Exit(0 if row.status == "done" else 1)


def batch(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: str | None = SPLIT,
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTIONS,
    harness: list[str] = HARNESS,
    samples: int = typer.Option(1, "--samples", "-k", min=1, help="Rollouts per task."),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, help="Rollouts at once."),
    run: str | None = typer.Option(
        None, "--run", help="Run name (default: derived from the arguments, so reruns resume)."
    ),
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    retry_failed: bool = typer.Option(
        True, "--retry-failed/--no-retry-failed", help="On resume, rerun failed rollouts."
    ),
    judge_same_model: bool = JUDGE_SAME_MODEL,
    judge_timeout: float | None = JUDGE_TIMEOUT,
    judge_max_tokens: int | None = JUDGE_MAX_TOKENS,
    store: str | None = STORE,
    rollout_fn: str | None = ROLLOUT_FN,
    chat: str | None = CHAT,
) -> None:
    """Run every task K times at bounded concurrency; rerun the same command to resume after a crash."""
    use_chat(chat)
    from gym.batch import BatchRequest, run_batch
    from gym.batch.executors import make_executor
    from gym.batch.progress import RichProgress
    from gym.batch.report import family_table, score_table

    req = BatchRequest(
        tasks=_tasks(tasks, seeds, levels, split),
        policy=policy,
        model=model,
        samples=samples,
        concurrency=concurrency,
        run_id=run,
        policy_options=policy_options(policy, option, rollout_fn),
        harness=harness_settings(harness),
        retry_failed=retry_failed,
        judge=judge_options(judge_same_model, judge_timeout, judge_max_tokens),
    )
    s = _store(store)
    ex = make_executor(executor, rollout_fn=rollout_fn, **({"address": address} if address else {}))
    try:
        result = run_async(run_batch(s, req, ex, RichProgress()))
    finally:
        ex.close()
    console.print(score_table(result.rows, title=f"run {result.run_id} ({policy})"))
    if (families := family_table(result.rows)) is not None:
        console.print(families)
    notes = [f"{result.ran} ran", f"{result.skipped} already done", f"{result.failed} failed"]
    notes += [f"{result.reaped} orphan container(s) reaped"] if result.reaped else []
    console.print(", ".join(notes) + f"  [dim](egym runs {result.run_id})[/]")
    raise typer.Exit(1 if result.failed else 0)


def runs(
    run_ids: list[str] = typer.Argument(
        None, metavar="[RUN]...", help="One run: its rollouts; several: compare them."
    ),
    limit: int = typer.Option(30, "--limit", "-n"),
    store: str | None = STORE,
) -> None:
    """List runs (newest first); one run's per-task scores and rollouts; or several runs side by side."""
    from gym.batch.listing import compare_table, run_detail, runs_table

    s = _store(store)
    if not run_ids:
        console.print(runs_table(s, limit=limit))
    elif len(run_ids) == 1:
        console.print(run_detail(s, run_ids[0]))
    else:
        console.print(compare_table(s, run_ids))


def show(
    rollout_id: str = typer.Argument(..., metavar="ROLLOUT", help="Rollout id (a unique prefix is enough)."),
    turns: bool = typer.Option(True, "--turns/--no-turns", help="Print the transcript turn by turn."),
    failed_only: bool = typer.Option(False, "--failed", help="Only rubric items that did not pass."),
    items: bool = typer.Option(
        False, "--items", help="Every rubric item, however many (large grades are summarised)."
    ),
    store: str | None = STORE,
) -> None:
    """Print one stored rollout: transcript, final answer, rubric breakdown."""
    from gym.batch.view import render_rollout

    row = _store(store).get_rollout(rollout_id)
    console.print(render_rollout(row, turns=turns, failed_only=failed_only, items=items))


def validate(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: str | None = SPLIT,
    null_threshold: float = typer.Option(
        0.1, "--null-threshold", help="Most the null policy may score (fraction)."
    ),
    cheats: bool = typer.Option(True, "--cheats/--no-cheats", help="Run the scripted reward-hack policies."),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1),
    harness: list[str] = HARNESS,
    chat: str | None = CHAT,
) -> None:
    """Check each task's rubric: oracle full score, null low, no holes, cheats no better than null."""
    use_chat(chat)
    from gym.validate import ValidateOptions, report_table, validate_tasks

    opts = ValidateOptions(
        null_threshold=null_threshold,
        cheats=cheats,
        concurrency=concurrency,
        harness=harness_settings(harness),
    )
    reports = run_async(validate_tasks(_tasks(tasks, seeds, levels, split), opts, console=console))
    console.print(report_table(reports))
    bad = [r for r in reports if not r.ok]
    for report in bad:
        for problem in report.problems:
            console.print(f"[red]✗[/] {report.task}: {problem}", highlight=False)
    console.print(f"{len(reports) - len(bad)}/{len(reports)} task(s) valid")
    raise typer.Exit(1 if bad else 0)


def calibrate(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: str | None = SPLIT,
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTIONS,
    harness: list[str] = HARNESS,
    samples: int = typer.Option(8, "--samples", "-k", min=1, help="Rollouts per task."),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1),
    run: str | None = typer.Option(None, "--run", help="Run name (default derived from the arguments)."),
    include_incomplete: bool = typer.Option(False, "--include-incomplete", help="Count incomplete grades."),
    write: bool = typer.Option(
        True,
        "--write/--dry-run",
        help="Write each band, under the model's key, into task.yaml (family levels: families/bands.yaml).",
    ),
    min_samples: int = typer.Option(
        8, "--min-samples", min=1, help="Fewest complete grades to write a band from."
    ),
    judge_same_model: bool = JUDGE_SAME_MODEL,
    judge_timeout: float | None = JUDGE_TIMEOUT,
    judge_max_tokens: int | None = JUDGE_MAX_TOKENS,
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    store: str | None = STORE,
    rollout_fn: str | None = ROLLOUT_FN,
    chat: str | None = CHAT,
) -> None:
    """Run K rollouts per task, then report pass rate (Wilson 95%) and difficulty band of the policy's model."""
    use_chat(chat)
    from gym.batch import BatchRequest
    from gym.batch.executors import make_executor
    from gym.batch.progress import RichProgress
    from gym.calibrate import calibrate_run, calibration_table

    req = BatchRequest(
        tasks=_tasks(tasks, seeds, levels, split),
        policy=policy,
        model=model,
        samples=samples,
        concurrency=concurrency,
        run_id=run,
        kind="calibrate",
        policy_options=policy_options(policy, option, rollout_fn),
        harness=harness_settings(harness),
        judge=judge_options(judge_same_model, judge_timeout, judge_max_tokens),
    )
    ex = make_executor(executor, rollout_fn=rollout_fn, **({"address": address} if address else {}))
    try:
        results = run_async(
            calibrate_run(
                _store(store),
                req,
                ex,
                include_incomplete=include_incomplete,
                write=write,
                min_samples=min_samples,
                progress=RichProgress(),
            )
        )
    finally:
        ex.close()
    console.print(calibration_table(results, written=write, min_samples=min_samples))


def export(
    run: str = typer.Argument(..., help="Run name (see `egym runs`); with --format harbor: " + TASKS_HELP),
    format: str = typer.Option("parquet", "--format", "-f", help="parquet, jsonl or harbor."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Output file (default .egym/exports/RUN.FORMAT; harbor: a folder)."
    ),
    include_incomplete: bool = typer.Option(
        False, "--include-incomplete", help="Keep rollouts with incomplete grades."
    ),
    store: str | None = STORE,
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
) -> None:
    """Write a run's rollouts as prompt/completion/reward rows for TRL, verl or SkyRL, or tasks as Harbor task folders."""
    if format == "harbor":  # tasks, not a run: gym.interop sits above gym.export, so the CLI dispatches
        from gym.interop.harbor import export_harbor

        folders = export_harbor(_tasks([Path(run)], seeds, levels), out or Path(".egym/exports/harbor"))
        console.print(f"wrote {len(folders)} Harbor task folder(s) under {folders[0].parent}")
        return
    from gym.export import export_run

    path, count = export_run(
        _store(store), run, format=format, out=out, include_incomplete=include_incomplete
    )
    console.print(f"wrote {count} row(s) to {path}")
