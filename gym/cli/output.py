"""Where a command's result goes: stdout, as tables on a terminal, as plain text in a pipe, or as JSON.

Progress, warnings and notes go to stderr (`gym.cli.errors.stderr`), so stdout holds only the
result: `egym runs --json | jq`, `egym validate tasks/acme > report.txt`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import typer
from rich.console import Console, Group, RenderableType
from rich.table import Table

# In a pipe or file nothing limits a line's length: wide enough that a row of `egym runs`
# (12 columns) is never cut, as rich's default 80 columns would.
PIPE_WIDTH = 240


def emit(*renderables: RenderableType) -> None:
    """Print results to stdout. In a pipe or file: plain text, as `ps` or `docker ps` print it, with
    tables unboxed (columns apart by spaces), titles on a line of their own, no trailing blanks."""
    console = Console()
    if console.is_terminal:
        for renderable in renderables:
            console.print(renderable)
        return
    console = Console(width=PIPE_WIDTH)
    with console.capture() as captured:
        for renderable in renderables:
            for part in _plain(renderable):
                console.print(part, soft_wrap=not isinstance(part, Table))
    typer.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


def _plain(renderable: RenderableType) -> list[RenderableType]:
    if isinstance(renderable, Group):
        return [part for child in renderable.renderables for part in _plain(child)]
    if isinstance(renderable, Table):
        title, renderable.title = renderable.title, None
        renderable.box, renderable.pad_edge = None, False
        return [*([title] if title else []), renderable]
    return [renderable]


def emit_json(document: Any) -> None:
    """One JSON document on stdout (dataclasses as objects, times in ISO 8601)."""
    typer.echo(json.dumps(document, indent=2, default=_jsonable, ensure_ascii=False))


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
