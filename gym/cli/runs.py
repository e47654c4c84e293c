"""Rollouts at scale: `egym rollout`, `batch`, `runs`, `show`, `validate`, `calibrate`, `export`.

Commands stay thin: they parse options (gym.cli.options), call gym.batch / gym.validate /
gym.calibrate / gym.export, and print the result with gym.cli.output; progress goes to stderr.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

import typer
from rich.console import Console

from gym.cli.errors import friendly, stderr
from gym.cli.options import (
    ADDRESS,
    CHAT,
    CONCURRENCY,
    EXECUTOR,
    HARNESS,
    JSON,
    JUDGE_MAX_TOKENS,
    JUDGE_SAME_MODEL,
    JUDGE_TIMEOUT,
    LEVELS,
    MODEL,
    OPTION,
    POLICY,
    ROLLOUT_FN,
    SAMPLES,
    SEEDS,
    SPLIT,
    STORE,
    TASKS_HELP,
    Chat,
    Split,
    check_executor,
    harness_settings,
    judge_options,
    open_store,
    policy_options,
    select_tasks,
    use_chat,
)
from gym.cli.output import emit, emit_json

T = TypeVar("T")
console = Console()


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
        stderr.print("[yellow]interrupted[/]: run the same command again to finish what is missing")
        raise typer.Exit(130) from None


def register(app: typer.Typer) -> None:
    for command in (rollout, batch, runs, show, validate, calibrate, export):
        app.command(name=command.__name__)(friendly(command))


def rollout(
    task: Path = typer.Argument(
        ..., help="Task folder (tasks/<world>/<task-id>) or instance id (acme/product-price-l0-s3)."
    ),
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTION,
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
    chat: Chat | None = CHAT,
) -> None:
    """Run one episode with a live view of its turns, then print the rubric breakdown."""
    use_chat(chat)
    from gym.batch.single import run_single

    judge = judge_options(judge_same_model, judge_timeout, judge_max_tokens)
    row = run_async(
        run_single(
            open_store(store),
            select_tasks([task])[0],
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
    split: Split | None = SPLIT,
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTION,
    harness: list[str] = HARNESS,
    samples: int = SAMPLES,
    concurrency: int = CONCURRENCY,
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
    chat: Chat | None = CHAT,
    as_json: bool = JSON,
) -> None:
    """Run every task K times at bounded concurrency; rerun the same command to resume after a crash."""
    use_chat(chat)
    check_executor(executor)
    from gym.batch import BatchRequest, run_batch
    from gym.batch.executors import make_executor
    from gym.batch.progress import RichProgress
    from gym.batch.report import family_scores, family_table, score_table, task_scores

    req = BatchRequest(
        tasks=select_tasks(tasks, seeds, levels, split),
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
    s = open_store(store)
    ex = make_executor(executor, rollout_fn=rollout_fn, **({"address": address} if address else {}))
    try:
        result = run_async(run_batch(s, req, ex, RichProgress()))
    finally:
        ex.close()
    counts = {"ran": result.ran, "skipped": result.skipped, "failed": result.failed, "reaped": result.reaped}
    if as_json:
        emit_json(
            {"run": result.run_id, "policy": policy, "model": model, **counts}
            | {"scores": task_scores(result.rows), "families": family_scores(result.rows)}
        )
    else:
        families = family_table(result.rows)
        emit(
            score_table(result.rows, title=f"run {result.run_id} ({policy})"),
            *([families] if families is not None else []),
        )
        notes = [f"{result.ran} ran", f"{result.skipped} already done", f"{result.failed} failed"]
        notes += [f"{result.reaped} orphan container(s) reaped"] if result.reaped else []
        console.print(", ".join(notes) + f"  [dim](egym runs {result.run_id})[/]")
    raise typer.Exit(1 if result.failed else 0)


def runs(
    run_ids: list[str] = typer.Argument(
        None, metavar="[RUN]...", help="One run: its rollouts; several: compare them."
    ),
    limit: int = typer.Option(30, "--limit", "-n", help="Most runs listed."),
    store: str | None = STORE,
    as_json: bool = JSON,
) -> None:
    """List runs (newest first); one run's per-task scores and rollouts; or several runs side by side."""
    from gym.batch import listing

    s = open_store(store)
    if not run_ids:
        summaries = [listing.run_summary(s, run) for run in s.list_runs(limit=limit)]
        if as_json:
            emit_json(summaries)
        elif summaries:
            emit(listing.runs_table(summaries))
        else:
            typer.echo("no runs in this store yet: `egym batch` or `egym rollout` make some")
    elif as_json:
        emit_json(
            listing.run_record(s, run_ids[0]) if len(run_ids) == 1 else listing.compare_record(s, run_ids)
        )
    else:
        emit(listing.run_detail(s, run_ids[0]) if len(run_ids) == 1 else listing.compare_table(s, run_ids))


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

    row = open_store(store).get_rollout(rollout_id)
    console.print(render_rollout(row, turns=turns, failed_only=failed_only, items=items))


def validate(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: Split | None = SPLIT,
    null_threshold: float = typer.Option(
        0.1, "--null-threshold", help="Most the null policy may score (fraction)."
    ),
    cheats: bool = typer.Option(True, "--cheats/--no-cheats", help="Run the scripted reward-hack policies."),
    concurrency: int = CONCURRENCY,
    harness: list[str] = HARNESS,
    chat: Chat | None = CHAT,
    as_json: bool = JSON,
) -> None:
    """Check each task's rubric: oracle full score, null low, no holes, cheats no better than null."""
    use_chat(chat)
    from gym.validate import ValidateOptions, report_record, report_table, validate_tasks

    opts = ValidateOptions(
        null_threshold=null_threshold,
        cheats=cheats,
        concurrency=concurrency,
        harness=harness_settings(harness),
    )
    reports = run_async(validate_tasks(select_tasks(tasks, seeds, levels, split), opts, console=stderr))
    bad = [r for r in reports if not r.ok]
    if as_json:
        emit_json([report_record(r) for r in reports])
    else:
        emit(report_table(reports))
        for report in bad:
            for problem in report.problems:
                console.print(f"[red]✗[/] {report.task}: {problem}", highlight=False)
        console.print(f"{len(reports) - len(bad)}/{len(reports)} task(s) valid")
    raise typer.Exit(1 if bad else 0)


def calibrate(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    split: Split | None = SPLIT,
    policy: str = POLICY,
    model: str | None = MODEL,
    option: list[str] = OPTION,
    harness: list[str] = HARNESS,
    samples: int = typer.Option(
        8,
        "--samples",
        "-k",
        min=1,
        help="Rollouts per task (default 8, not batch's 1: a band is written from --min-samples complete grades).",
    ),
    concurrency: int = CONCURRENCY,
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
    max_samples: int | None = typer.Option(
        None,
        "--max-samples",
        min=1,
        help="Sample in rounds of --samples until each task's (or family level's) 95% interval sits "
        "inside one band, up to this many rollouts per task (default: one round).",
    ),
    judge_same_model: bool = JUDGE_SAME_MODEL,
    judge_timeout: float | None = JUDGE_TIMEOUT,
    judge_max_tokens: int | None = JUDGE_MAX_TOKENS,
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    store: str | None = STORE,
    rollout_fn: str | None = ROLLOUT_FN,
    chat: Chat | None = CHAT,
) -> None:
    """Run K rollouts per task, then report pass rate (Wilson 95%) and difficulty band of the policy's model."""
    use_chat(chat)
    check_executor(executor)
    if max_samples is not None and max_samples < samples:
        raise typer.BadParameter(f"--max-samples {max_samples} is below --samples {samples}")
    from gym.batch import BatchRequest
    from gym.batch.executors import make_executor
    from gym.batch.progress import RichProgress
    from gym.calibrate import calibrate_run, calibration_table

    req = BatchRequest(
        tasks=select_tasks(tasks, seeds, levels, split),
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
                open_store(store),
                req,
                ex,
                include_incomplete=include_incomplete,
                write=write,
                min_samples=min_samples,
                max_samples=max_samples,
                progress=RichProgress(),
            )
        )
    finally:
        ex.close()
    emit(calibration_table(results, written=write, min_samples=min_samples))


def export(
    run: str = typer.Argument(..., help="Run name (see `egym runs`); with --format harbor: " + TASKS_HELP),
    format: Literal["parquet", "jsonl", "harbor"] = typer.Option(
        "parquet", "--format", "-f", help="Rows as parquet or jsonl, or tasks as Harbor task folders."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Output file (default .egym/exports/RUN.FORMAT; harbor: a folder)."
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

        folders = export_harbor(select_tasks([Path(run)], seeds, levels), out or Path(".egym/exports/harbor"))
        console.print(f"wrote {len(folders)} Harbor task folder(s) under {folders[0].parent}")
        return
    from gym.export import export_run

    path, count = export_run(
        open_store(store), run, format=format, out=out, include_incomplete=include_incomplete
    )
    console.print(f"wrote {count} row(s) to {path}")
