"""`egym sft-data` (examples from the gym) and `egym sft` (fine-tune on them): the warm start before GRPO."""

from __future__ import annotations

from pathlib import Path

import typer

from gym.cli.errors import friendly
from gym.cli.options import (
    CONCURRENCY,
    HARNESS,
    LEVELS,
    SEEDS,
    STORE,
    TASKS_HELP,
    harness_settings,
    open_store,
    select_tasks,
)
from gym.cli.runs import console, run_async


def sft_data(
    tasks: list[Path] = typer.Argument(..., help=TASKS_HELP),
    seeds: str | None = SEEDS,
    levels: str | None = LEVELS,
    model: str = typer.Option(
        "smollm2",
        "--model",
        "-m",
        help="The model whose chat template and tool format the data is rendered in.",
    ),
    out: Path = typer.Option(..., "--out", help="Dataset folder (data.jsonl, data.parquet, manifest.json)."),
    oracle: bool = typer.Option(
        True, "--oracle/--no-oracle", help="Replay the oracle on the train-split tasks."
    ),
    from_run: list[str] = typer.Option(
        [], "--from-run", help="Also take stored rollouts of this run (any policy) at or above --min-score."
    ),
    min_score: float = typer.Option(
        1.0, "--min-score", min=0.0, max=1.0, help="Least normalized score kept."
    ),
    concurrency: int = CONCURRENCY,
    store: str | None = STORE,
    harness: list[str] = HARNESS,
) -> None:
    """Make SFT data: every assistant turn of the oracle (and of good stored rollouts) on train-split tasks."""
    from transformers import AutoTokenizer

    from gym.batch.progress import RichProgress
    from gym.models.store import resolve_model
    from gym.sft import collect, format_id, write_dataset

    settings = harness_settings(harness)  # -H prompt=compact: the prompts of training and evaluation
    folder = resolve_model(model)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    chosen = select_tasks(tasks, seeds, levels)
    collected = run_async(
        collect(
            open_store(store),
            chosen,
            tokenizer,
            oracle=oracle,
            runs=from_run,
            min_score=min_score,
            concurrency=concurrency,
            progress=RichProgress(),
            harness=settings,
        )
    )
    manifest = {
        "tokenizer": model,
        "format": format_id(tokenizer, settings.prompt),
        "prompt": settings.prompt,
        "splits": {t.key: t.split for t in chosen if t.split == "train"},
        "sources": (["oracle"] if oracle else []) + [f"run:{r}" for r in from_run],
        "min_score": min_score,
    }
    write_dataset(out, collected, manifest)
    held_out = sum(1 for t in chosen if t.split != "train")
    failed = {k: v for k, v in collected.skipped.items() if k.startswith("oracle/")}
    console.print(
        f"{len(collected.examples)} examples from {len({e.task for e in collected.examples})} tasks -> {out} "
        f"({held_out} val/test tasks left out, {collected.duplicates} duplicates dropped)",
        highlight=False,
    )
    for key, why in failed.items():
        console.print(f"[red]✗[/] {key}: {why}", highlight=False)
    if failed:
        console.print(
            f"[red]incomplete[/]: the oracle failed on {len(failed)} task(s); their turns are missing"
        )
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command(name="sft-data")(friendly(sft_data))
