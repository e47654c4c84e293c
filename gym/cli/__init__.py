"""`egym`: the command line. Each area registers its commands from its own module.

Heavy imports (torch, docker, the grader) happen inside the commands, so
`egym --help` stays fast.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import typer

from gym.cli import (
    grading,
    models,
    runs,
    sandbox_cmds,
    serve_cmds,
    serving,
    sft_cmds,
    tasks_cmds,
    training,
)

app = typer.Typer(
    name="egym",
    help="enterprise-gym: sandboxed enterprise tasks, rubric grading, GRPO training.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Help and usage errors in rich panels on a terminal; plain click text (no box drawing) in a pipe or log.
    rich_markup_mode="rich" if sys.stdout.isatty() else None,
)


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import version

        typer.echo(f"egym {version('enterprise-gym')}")
        raise typer.Exit()


@app.callback()
def _root(
    log_level: Literal["debug", "info", "warning", "error"] = typer.Option(
        "warning", "--log-level", help="Log messages shown on stderr, from this level up."
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print egym's version and exit."
    ),
) -> None:
    """enterprise-gym: sandboxed enterprise tasks, rubric grading, GRPO training."""
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # to stderr, unless a handler exists
    logging.getLogger().setLevel(log_level.upper())


for module in (sandbox_cmds, grading, runs, training, sft_cmds, serving, serve_cmds, models, tasks_cmds):
    module.register(app)


def main() -> None:
    app()
