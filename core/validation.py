"""One line for a pydantic ValidationError: where, what, and for a mistyped key the closest valid one.

    try:
        HarnessConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, where="--harness", model=HarnessConfig)) from None

gives e.g. `--harness max_turn: unknown key; did you mean 'max_turns'?`.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

_BOUNDS = {"greater_than": ">", "greater_than_equal": "≥", "less_than": "<", "less_than_equal": "≤"}


def describe_validation_error(
    exc: ValidationError, *, where: str = "", model: type[BaseModel] | None = None, most: int = 1
) -> str:
    """The first `most` errors as `where.key.path: message`, `; `-joined, and `(+N more)` for the rest.

    Unknown keys come first: a mistyped `promt:` is the cause of `prompt: Field required`.
    """
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    parts = []
    for error in errors[:most]:
        path = [str(part) for part in error["loc"]]
        # A key such as "\n" is shown quoted, so the message stays one readable line.
        shown = ".".join(p if p.isprintable() and p.strip() else repr(p) for p in path)
        location = ".".join(p for p in (where, shown) if p) or "(top level)"
        parts.append(f"{location}: {_message(error, model, path)}")
    rest = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{rest} more)" if rest > 0 else "")


def _message(error: Any, model: type[BaseModel] | None, path: list[str]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key" + _suggestion(model, path)
    if kind in _BOUNDS:
        bound = next(iter(error.get("ctx", {}).values()), "?")
        return f"{_shown(error['input'])} is out of range (must be {_BOUNDS[kind]} {_shown(bound)})"
    if kind == "finite_number":
        return f"{_shown(error['input'])} is not a finite number"
    if kind in ("int_parsing", "int_from_float"):
        limits = _range(_field(model, path))
        return f"{_shown(error['input'])} is not a whole number" + (f" (must be {limits})" if limits else "")
    return error["msg"]


def _field(model: type[BaseModel] | None, path: list[str]) -> Any:
    """The pydantic FieldInfo at `path` inside `model`, or None."""
    field = None
    for part in path:
        if model is None:
            return None
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return field


def _range(field: Any) -> str:
    """'1 ≤ x ≤ 1000' style bounds from a field's ge/gt/le/lt constraints ('' when it has none)."""
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = [
        f"{signs[name]} {_shown(getattr(meta, name))}"
        for meta in getattr(field, "metadata", ())
        for name in signs
        if getattr(meta, name, None) is not None
    ]
    return " and ".join(found)


def _shown(value: Any) -> str:
    """The value as the user wrote it: YAML reads `1e29` as text; 86400.0 is shown as 86400."""
    if isinstance(value, float):
        return (
            f"{value:g}"
            if math.isfinite(value) and value == int(value) and abs(value) < 1e16
            else repr(value)
        )
    return value if isinstance(value, str) else repr(value)


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
