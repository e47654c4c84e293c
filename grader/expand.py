"""Parameterised items: one rubric entry becomes one item per value.

    {"id": "paid-{{invoice}}", "description": "Invoice {{invoice}} is marked paid", "points": 1,
     "kind": "python", "check": "sql.value_equals",
     "args": {"query": "SELECT status FROM invoices WHERE number = %(n)s", "params": {"n": "{{invoice}}"},
              "expected": "paid"},
     "foreach": {"values": ["INV-1001", "INV-1002"], "as": "invoice"}}

The expanded set must never depend on what the agent did, or `possible` would
move with the agent's behaviour. So values come from the rubric itself (a
literal list or a data file next to it) or from `initial_query`, which is run
against the *untouched initial state* (grader.initial_state resolves and caches it),
never against the final state.

Placeholders are `{{name}}`. A string that is exactly one placeholder takes the
bound value with its JSON type (a number stays a number); elsewhere the value is
formatted into the text. In ids, substituted values are slugged to the id alphabet.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.errors import RubricError
from core.validation import describe_validation_error
from grader.rubric import Item, Rubric

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ITEM = TypeAdapter(Item)

InitialRows = Mapping[str, list[dict[str, Any]]]


def bindings(rubric: Rubric, index: int, initial_rows: InitialRows | None = None) -> list[dict[str, Any]]:
    """The variable bindings item `index` expands over (one dict per expanded item)."""
    item = rubric.items[index]
    spec = item.foreach
    assert spec is not None
    where = f"{rubric.path or rubric.task}:$.items[{index}].foreach"
    if spec.values is not None:
        values = spec.values
    elif spec.values_file is not None:
        values = _read_values_file(rubric, spec.values_file, where)
    else:
        if initial_rows is None or spec.initial_query not in initial_rows:
            raise RubricError(
                f"{where}: initial_query not resolved; grade with initial= (gym.episode.TaskInitialState) or pass initial_rows"
            )
        values = initial_rows[spec.initial_query]
    name = spec.as_ or "value"
    return [dict(v) if isinstance(v, dict) else {name: v} for v in values]


def _read_values_file(rubric: Rubric, name: str, where: str) -> list[Any]:
    base = rubric.path.parent if rubric.path else Path(".")
    path = base / name
    try:
        text = path.read_text()
    except OSError as exc:
        raise RubricError(f"{where}.values_file: cannot read {path}: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(text.splitlines()))
    try:
        values = json.loads(text)
    except ValueError as exc:
        raise RubricError(f"{where}.values_file: {path} is not valid JSON ({exc})") from None
    if not isinstance(values, list):
        raise RubricError(f"{where}.values_file: {path} must hold a JSON list")
    return values


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.:-]+", "-", str(value)).strip("-") or "_"


def substitute(value: Any, bound: Mapping[str, Any], *, slug: bool = False) -> Any:
    """Replace `{{name}}` placeholders throughout a JSON value; KeyError names an unbound placeholder."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole and not slug:
            return bound[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: _slug(bound[m.group(1)]) if slug else str(bound[m.group(1)]), value)
    if isinstance(value, list):
        return [substitute(v, bound, slug=slug) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, bound, slug=slug) for k, v in value.items()}
    return value


def placeholders(value: Any) -> set[str]:
    """Every placeholder name used anywhere in a JSON value."""
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    if isinstance(value, list):
        return set().union(*map(placeholders, value)) if value else set()
    if isinstance(value, dict):
        return set().union(*map(placeholders, value.values())) if value else set()
    return set()


def expand_item(rubric: Rubric, index: int, initial_rows: InitialRows | None = None) -> list[Item]:
    """Item `index` as concrete items (itself when it has no `foreach`)."""
    item = rubric.items[index]
    if item.foreach is None:
        return [item]
    template = item.model_dump(by_alias=True, exclude={"foreach"}, exclude_none=True)
    template_id = template.pop("id")
    out: list[Item] = []
    for n, bound in enumerate(bindings(rubric, index, initial_rows), start=1):
        where = f"{rubric.path or rubric.task}:$.items[{index}]"
        try:
            data = substitute(template, bound)
            item_id = (
                substitute(template_id, bound, slug=True)
                if PLACEHOLDER.search(template_id)
                else f"{template_id}.{n}"
            )
        except KeyError as exc:
            raise RubricError(
                f"{where}: placeholder {{{{{exc.args[0]}}}}} is not bound (bound: {', '.join(bound) or 'nothing'})"
            ) from None
        try:
            out.append(_ITEM.validate_python({**data, "id": item_id}))
        except ValidationError as exc:
            raise RubricError(
                f"{where}: expansion #{n} ({bound}) is invalid: {describe_validation_error(exc)}"
            ) from None
    return out


def expand_items(rubric: Rubric, initial_rows: InitialRows | None = None) -> list[Item]:
    """Every concrete item of the rubric, in file order; RubricError on unbound placeholders or duplicate ids."""
    items = [
        concrete
        for index in range(len(rubric.items))
        for concrete in expand_item(rubric, index, initial_rows)
    ]
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise RubricError(
                f"{rubric.path or rubric.task}: item id {item.id!r} appears twice after expansion"
            )
        seen.add(item.id)
    return items
