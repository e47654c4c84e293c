"""Sandbox housekeeping: `egym gc`."""

from __future__ import annotations

import typer

from gym.cli.errors import friendly


def register(app: typer.Typer) -> None:
    @app.command()
    @friendly
    def gc(
        all_: bool = typer.Option(False, "--all", help="Remove every egym container, owned or not."),
    ) -> None:
        """Remove rollout containers whose owner process is gone."""
        from gym.sandbox.reaper import reap

        removed = reap(everything=all_)
        typer.echo(f"removed {len(removed)} container(s)")
