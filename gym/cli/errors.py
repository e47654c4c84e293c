"""Turn EgymError into one red line and exit code 2, instead of a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import typer
from rich.console import Console

from core.errors import EgymError

F = TypeVar("F", bound=Callable)
stderr = Console(stderr=True)


def friendly(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EgymError as exc:
            stderr.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]
