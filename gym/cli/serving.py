"""`egym serve`: the read-only web dashboard over the run store."""

from __future__ import annotations

from pathlib import Path

import typer

from gym.cli.errors import friendly, stderr
from gym.cli.options import HOST, STORE


@friendly
def serve(
    store: str | None = STORE,
    port: int = typer.Option(8765, "--port", help="TCP port to listen on."),
    host: str = HOST,
    tasks: Path | None = typer.Option(
        None,
        "--tasks",
        help="A folder of worlds (<world>/world.yaml) for the library, prompts and bands "
        "(default: every world installed or in ./tasks).",
    ),
    metrics: list[Path] = typer.Option(
        None, "--metrics", help="Training metrics JSONL file or folder (repeatable; default: runs/)."
    ),
) -> None:
    """Serve the dashboard: runs, tasks, rollouts and training curves (read-only)."""
    import uvicorn

    from gym.dashboard.app import DashboardConfig, create_app

    config = DashboardConfig(store=store, tasks_dir=tasks, metrics=metrics or [Path("runs")])
    app = create_app(config)
    if host not in ("127.0.0.1", "localhost", "::1"):
        stderr.print(f"[yellow]warning:[/yellow] binding {host}: anyone who can reach it can read every run")
    stderr.print(
        f"egym dashboard on http://{host}:{port}  (store {app.state.ctx.store_label}, Ctrl-C to stop)"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
