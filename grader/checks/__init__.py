"""Check registry: rubric items name checks by string, imported only when used.

- `sql.row_exists` -> built-in `grader.checks.sql:row_exists`
- `rubrics.acme.checks:totals_match` -> a task-specific function next to the rubric
- `my-check` -> an installed package's `egym.checks` entry point (core.plugins)

Each built-in module lists its checks in `__all__`. Unknown names fail with a
"did you mean" hint.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import RubricError
from core.plugins import Registry
from mcp_wrappers.apps import apps

# Each app's checks (the `checks` of its app.toml), then those over any app's changes and the transcript.
BUILTIN_MODULES = (*(m for spec in apps().values() for m in spec.checks), "files", "transcript", "claims")
INSTALLED = Registry("check", "egym.checks", error=RubricError)  # other packages' checks, by name
Check = Callable[..., Any]
_cache: dict[str, Check] = {}


def builtin_names() -> list[str]:
    """Every built-in check's short name, e.g. 'sql.row_exists'."""
    names = []
    for module in BUILTIN_MODULES:
        names += [f"{module}.{fn}" for fn in importlib.import_module(f"grader.checks.{module}").__all__]
    return names


def _split(ref: str) -> tuple[str, str]:
    if ":" not in ref and ref in INSTALLED.names():
        ref = INSTALLED.target(ref)
    if ":" in ref:
        module, _, name = ref.partition(":")
        return module, name
    module, _, name = ref.rpartition(".")
    if module not in BUILTIN_MODULES:
        hint = difflib.get_close_matches(ref, builtin_names(), n=1)
        more = (
            f"did you mean {hint[0]!r}?"
            if hint
            else "built-ins are <module>.<check>; others are 'package.module:function'"
        )
        raise RubricError(f"unknown check {ref!r}: {more}")
    return f"grader.checks.{module}", name


def _import(module: str, near: Path | None):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        root = _package_root(module, near)
        if root is None or exc.name not in {module.rsplit(".", i)[0] for i in range(module.count(".") + 1)}:
            raise RubricError(f"check module {module!r} cannot be imported: {exc}") from None
        # Task-specific checks live in the repository (rubrics/<world>/...), which
        # is not installed: make its root importable, once, when a rubric asks.
        sys.path.insert(0, str(root))
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as again:
            raise RubricError(f"check module {module!r} cannot be imported: {again}") from None
    except Exception as exc:  # noqa: BLE001 - a broken task module must not crash lint or grading
        raise RubricError(f"check module {module!r} failed to import: {type(exc).__name__}: {exc}") from None


def _package_root(module: str, near: Path | None) -> Path | None:
    """The folder holding the module's file, searched upward from the rubric file.

    The file itself is looked for, not just its top package: a generated instance's rubric sits
    in .egym/instances/rubrics/, whose `rubrics` folder holds no checks.
    """
    if near is None:
        return None
    relative = Path(*module.split("."))
    for folder in Path(near).resolve().parents:
        found = (folder / relative).with_suffix(".py").is_file() or (
            folder / relative / "__init__.py"
        ).is_file()
        if found and str(folder) not in sys.path:
            return folder
    return None


def resolve(ref: str, *, near: Path | None = None) -> Check:
    """The check function `ref` names; RubricError (with a hint) when it does not exist."""
    if ref in _cache:
        return _cache[ref]
    module_name, name = _split(ref)
    module = _import(module_name, near)
    fn = getattr(module, name, None)
    public = getattr(module, "__all__", None)
    if not callable(fn) or (
        public is not None and name not in public and module_name.startswith("grader.checks.")
    ):
        choices = list(
            public or [n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_")]
        )
        hint = difflib.get_close_matches(name, choices, n=1)
        more = f"did you mean {hint[0]!r}?" if hint else f"it has: {', '.join(choices) or 'no checks'}"
        raise RubricError(f"check {ref!r}: {module_name} has no check {name!r}; {more}")
    _cache[ref] = fn
    return fn


def signature_problem(fn: Check, args: dict[str, Any]) -> str | None:
    """Why `args` cannot be passed to check `fn` (None when they can)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return f"{fn.__name__} must take the context as its first positional parameter"
    try:
        sig.bind(None, **args)
    except TypeError as exc:
        known = [p.name for p in params[1:]]
        unknown = [a for a in args if a not in known]
        if unknown and not any(p.kind == p.VAR_KEYWORD for p in params):
            hint = difflib.get_close_matches(unknown[0], known, n=1)
            return f"unexpected argument {unknown[0]!r}" + (
                f" (did you mean {hint[0]!r}?)" if hint else f" ({fn.__name__} takes {', '.join(known)})"
            )
        return f"{exc}".replace("missing a required argument", "missing required argument")
    return None


def documents_read(fn: Check, args: dict[str, Any]) -> list[str]:
    """Document paths a check declared (via @reads_documents) it will read, for prefetching."""
    names = getattr(fn, "__egym_documents__", ())
    return [args[n] for n in names if isinstance(args.get(n), str)]


def queries_read(fn: Check, args: dict[str, Any]) -> list[tuple[str, Any]]:
    """(query, params) a check declared (via @reads_sql) it will run, for pipelining."""
    names = getattr(fn, "__egym_sql__", None)
    if not names or not isinstance(args.get(names[0]), str):
        return []
    return [(args[names[0]], args.get(names[1]))]
