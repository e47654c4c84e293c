"""One line for a pydantic ValidationError: where, what, and for a mistyped key the closest valid one.

    try:
        HarnessConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, where="--harness", model=HarnessConfig)) from None

gives e.g. `--harness max_turn: unknown key; did you mean 'max_turns'?`.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError


def describe_validation_error(
    exc: ValidationError, *, where: str = "", model: type[BaseModel] | None = None, most: int = 1
) -> str:
    """The first `most` errors as `where.key.path: message`, `; `-joined, and `(+N more)` for the rest."""
    parts = []
    for error in exc.errors()[:most]:
        path = [str(part) for part in error["loc"]]
        location = ".".join(p for p in (where, ".".join(path)) if p) or "(top level)"
        unknown = error["type"] == "extra_forbidden"
        parts.append(
            f"{location}: " + ("unknown key" + _suggestion(model, path) if unknown else error["msg"])
        )
    rest = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{rest} more)" if rest > 0 else "")


def closest(name: str, choices: typing.Iterable[str], *, list_known: bool = True) -> str:
    """`; did you mean 'x'?` for the nearest of `choices`, else `; known: a, b, c` (when `list_known`)."""
    choices = sorted(choices)
    hint = difflib.get_close_matches(name, choices, n=1)
    if hint:
        return f"; did you mean '{hint[0]}'?"
    return f"; known: {', '.join(choices)}" if choices and list_known else ""


def _suggestion(model: type[BaseModel] | None, path: list[str]) -> str:
    """Walk `model` down `path[:-1]` to the model that refused `path[-1]`, and name its closest field."""
    for part in path[:-1]:
        if model is None:
            return ""
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return closest(path[-1], model.model_fields) if model is not None and path else ""


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds: itself, or inside Optional[...] / X | None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None
