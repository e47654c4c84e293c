"""The reference of every check a rubric can name, written from the code: docs/checks.md.

    .venv/bin/python -m grader.checks_reference > docs/checks.md

Signatures and docstrings come from the functions themselves, so the page cannot drift from
them (a test compares docs/checks.md with this output). A world's own checks (e.g.
rubrics/acme/checks.py) are listed after the built-ins.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from grader.checks import BUILTIN_MODULES

WORLD_CHECKS = ("rubrics.acme.checks",)
HEADER = """# Checks

Every check a rubric item can name in `check`, with its arguments (`args`) and what makes it pass.
Written from the code by `python -m grader.checks_reference > docs/checks.md`; do not edit by hand.
Arguments without a default are required; `ctx` is supplied by the grader. See docs/rubrics.md
for items, points, penalties and `foreach`, and docs/authoring.md for writing a family.
"""


def _arguments(fn) -> str:
    parts = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == "ctx" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        parts.append(name if param.default is param.empty else f"{name}={param.default!r}")
    return ", ".join(parts)


def _entries(module: ModuleType, names: list[str], prefix: str) -> Iterator[str]:
    for name in names:
        fn = getattr(module, name)
        doc = inspect.cleandoc(fn.__doc__ or "(no description)")
        yield f"### `{prefix}{name}({_arguments(fn)})`\n\n{doc}\n"


def _world_check_names(module: ModuleType) -> list[str]:
    """Public functions whose first parameter is the grader's `ctx`: the checks a rubric can name."""
    return [
        name
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if not name.startswith("_")
        and fn.__module__ == module.__name__
        and next(iter(inspect.signature(fn).parameters), None) == "ctx"
    ]


def reference() -> str:
    parts = [HEADER]
    for short in BUILTIN_MODULES:
        module = importlib.import_module(f"grader.checks.{short}")
        parts.append(f"## Built-in: `{short}`\n\n{inspect.cleandoc(module.__doc__ or '')}\n")
        parts += _entries(module, list(module.__all__), f"{short}.")
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    for name in WORLD_CHECKS:
        module = importlib.import_module(name)
        parts.append(
            f"## World checks: `{name.replace('.', '/')}.py`\n\nNamed as `{name}:<function>`. "
            f"{inspect.cleandoc(module.__doc__ or '')}\n"
        )
        parts += _entries(module, _world_check_names(module), f"{name}:")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(reference())
