"""`egym`: the command line. Each area registers its commands from its own module.

Heavy imports (torch, docker, the grader) happen inside the commands, so
`egym --help` stays fast.
"""

from __future__ import annotations

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
)


@app.callback()
def _root() -> None:
    """enterprise-gym: sandboxed enterprise tasks, rubric grading, GRPO training."""


for module in (sandbox_cmds, grading, runs, training, sft_cmds, serving, serve_cmds, models, tasks_cmds):
    module.register(app)


def main() -> None:
    app()
