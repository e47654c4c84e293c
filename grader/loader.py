"""Load rubric JSON files: JSON Schema first (errors with JSON paths), then the typed models.

Every problem is reported as a `Problem(file, path, message)`, printed
`file:$.items[3].check: message`. `load_rubric` raises the first as a one-line
RubricError; `check_rubric` returns them all (for `egym lint`). Neither ever
lets another exception escape for any input bytes.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib.resources
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import ValidationError

from core.errors import RubricError
from grader.rubric import Rubric

# Package data, so an installed grader finds it wherever it lives.
SCHEMA = importlib.resources.files("grader") / "schema" / "rubric.schema.json"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file, located by JSON path (`$` is the whole document) and, when known, line.

    A `warning` is accepted but probably not what the author meant (egym lint shows it;
    `--strict` fails on it).
    """

    file: str
    path: str
    message: str
    line: int | None = None
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: {self.path}" if self.line else f"{self.file}:{self.path}"
        return f"{where}: {'warning: ' if self.severity == 'warning' else ''}{self.message}"


@functools.cache
def validator() -> jsonschema.protocols.Validator:
    try:
        schema = json.loads(SCHEMA.read_text())
    except (OSError, ValueError) as exc:
        raise RubricError(
            f"{SCHEMA}: cannot read the rubric schema ({exc}); reinstall from the repository"
        ) from None
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def json_path(parts: Iterable[Any]) -> str:
    """('items', 3, 'check') -> '$.items[3].check'."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message(error: jsonschema.ValidationError) -> str:
    """A one-line, human message for a schema error (never the whole instance dumped)."""
    kind = error.validator
    if kind == "oneOf" and tuple(error.absolute_path)[-1:] == ("foreach",):
        return "give exactly one of 'values', 'values_file', 'initial_query'"
    if kind in ("oneOf", "anyOf") and error.context:
        # Skip branches that failed only because the value has another shape.
        specific = [
            e for e in error.context if e.relative_path or e.validator not in ("type", "const", "enum")
        ]
        return _message(jsonschema.exceptions.best_match(specific or error.context))
    if kind == "type":
        return f"{_short(error.instance)} is not of type {error.validator_value!r}"
    if kind in ("enum", "const"):
        allowed = error.validator_value if kind == "enum" else [error.validator_value]
        return f"{_short(error.instance)} is not one of {', '.join(map(repr, allowed))}"
    if kind == "pattern":
        return f"{_short(error.instance)} does not match {error.validator_value!r}"
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        return "; ".join(_unknown_key(key, known) for key in error.instance if key not in known)
    if kind in _BOUNDS:
        return f"{_short(error.instance)} is out of range (must be {_BOUNDS[kind]} {error.validator_value})"
    if kind in ("minItems", "minLength", "maxLength", "minProperties"):
        return f"{_short(error.instance)}: {kind} is {error.validator_value}"
    return error.message.replace("\n", " ")


_BOUNDS = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _unknown_key(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (allowed: {', '.join(known)})"
    return f"unknown key {key!r}{hint}"


def schema_problems(data: Any, file: str) -> list[Problem]:
    """Every schema violation, deduplicated; an item with a bad `kind` reports only that."""
    errors = sorted(validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    bad_kind = {tuple(e.absolute_path)[:-1] for e in errors if tuple(e.absolute_path)[-1:] == ("kind",)}
    problems: list[Problem] = []
    for error in errors:
        where = tuple(error.absolute_path)
        if any(where[: len(k)] == k for k in bad_kind) and where not in ((*k, "kind") for k in bad_kind):
            continue
        if where in ((*k, "kind") for k in bad_kind) and any(p.path == json_path(where) for p in problems):
            continue
        problem = Problem(file, json_path(where), _message(error))
        if problem not in problems:
            problems.append(problem)
    return problems


def _pydantic_problems(exc: ValidationError, file: str) -> list[Problem]:
    return [Problem(file, json_path(e["loc"]), e["msg"]) for e in exc.errors()]


def _semantic_problems(rubric: Rubric, file: str, path: Path | None) -> list[Problem]:
    """What the schema cannot say: unique ids, a positive total, the file's location."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(rubric.items):
        if item.id in seen:
            problems.append(
                Problem(
                    file, f"$.items[{index}].id", f"duplicate id {item.id!r} (also $.items[{seen[item.id]}])"
                )
            )
        seen.setdefault(item.id, index)
        if item.points == 0 and not item.gate:
            problems.append(
                Problem(file, f"$.items[{index}].points", "0 points: only gate items may be worth nothing")
            )
    if not any(item.points > 0 for item in rubric.items):
        problems.append(
            Problem(file, "$.items", "no item has positive points, so the total possible would be 0")
        )
    if path is not None and path.parent.parent.name == "rubrics":
        expected = f"{path.parent.name}/{path.stem}"
        if rubric.task != expected:
            problems.append(
                Problem(file, "$.task", f"{rubric.task!r} but the file's location says {expected!r}")
            )
    return problems


def parse_rubric(
    raw: bytes | str, file: str = "<rubric>", path: Path | None = None
) -> tuple[Rubric | None, list[Problem]]:
    """Parse and validate rubric text. Returns the rubric (None when unusable) and every problem found."""
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "?"
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return None, [Problem(file, "$", f"invalid JSON: {msg} ({where})")]
    try:
        problems = schema_problems(data, file)
    except RecursionError:
        return None, [Problem(file, "$", "document nested too deeply")]
    if problems:
        return None, problems
    digest = hashlib.sha256(raw.encode() if isinstance(raw, str) else raw).hexdigest()[:16]
    try:
        rubric = Rubric.model_validate({**data, "path": path, "hash": digest})
    except ValidationError as exc:
        return None, _pydantic_problems(exc, file)
    return rubric, _semantic_problems(rubric, file, path)


def _no_constant(name: str) -> None:
    """Python's json reads NaN and Infinity, which JSON does not have and no limit should be."""
    raise ValueError(f"{name} is not a JSON number")


def check_rubric(path: str | Path) -> tuple[Rubric | None, list[Problem]]:
    """Load a rubric file and report every problem (lint); the rubric is None when it cannot be used."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(str(path), "$", f"cannot read: {exc.strerror or exc}")]
    return parse_rubric(raw, str(path), path)


def load_rubric(path: str | Path) -> Rubric:
    """The rubric in `path`; raises RubricError naming the file and JSON path of the first problem."""
    rubric, problems = check_rubric(path)
    if problems:
        more = f" (+{len(problems) - 1} more; run `egym lint {path}`)" if len(problems) > 1 else ""
        raise RubricError(f"{problems[0]}{more}")
    assert rubric is not None
    return rubric


def world_rubrics(world_dir: Path) -> Path:
    """Where the rubrics of a world's tasks live: `<root>/rubrics/<world>/` beside the `<root>/tasks/<world>/`
    that holds the world, in a checkout, a world package (gym.worlds) and an instance tree alike."""
    return world_dir.parent.parent / "rubrics" / world_dir.name


def rubric_for_task(task) -> Path:
    """The rubric of a loaded `gym.tasks.Task`: `<task-id>.json` in its world's rubrics folder."""
    return world_rubrics(Path(task.path).resolve().parent) / f"{task.id}.json"
