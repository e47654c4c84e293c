"""The rubric JSON Schema is generated from the models: the committed file cannot drift from them, and a
file the schema accepts is one the models accept (the loader checks the schema first)."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from grader.rubric import Rubric
from grader.rubric_schema import PATH, render, rubric_json_schema
from tests.grader.test_loader import VALID

VALIDATOR = jsonschema.Draft202012Validator(rubric_json_schema())
FULL = {
    **copy.deepcopy(VALID),
    "limits": {"check_timeout_s": 5, "grade_timeout_s": 60},
    "damage": {
        "points": 2,
        "cap": 10,
        "allow": [{"table": "invoices", "may": ["change"], "columns": ["status"]}],
    },
    "claims": {
        "author": "ann",
        "kinds": {
            "amount": {"extract": "amount", "tolerance": 0.01},
            "status": {"values": ["open", {"value": "closed", "regex": "clos(ed|ing)"}]},
            "tickets": {"extract": "count", "noun": "tickets?"},
        },
    },
}
FULL["items"][0]["foreach"] = {"values": [1, 2], "as": "n"}
FULL["items"][0]["id"] = "row-{{n}}"


def test_the_committed_schema_is_the_one_the_models_generate():
    assert PATH.read_text() == render(), "the rubric models changed: run `python -m grader.rubric_schema`"
    jsonschema.Draft202012Validator.check_schema(json.loads(PATH.read_text()))


def test_what_editors_rely_on_is_in_the_generated_schema():
    schema = rubric_json_schema()
    task = schema["properties"]["task"]
    assert task["pattern"].startswith("^") and "location" in task["description"]
    item = schema["$defs"]["PythonItem"]
    assert item["dependentRequired"] == {"baseline_ok": ["baseline_reason"]}
    assert item["properties"]["points"]["minimum"] == -1000 and "pattern" in item["properties"]["check"]
    assert schema["properties"]["items"]["items"]["properties"]["kind"]["enum"] == ["python", "judge"]
    assert schema["$defs"]["Panel"]["properties"]["rule"]["enum"] == ["majority", "mean"]
    assert "path" not in schema["properties"] and "hash" not in schema["properties"]  # set by the loader
    # An optional key may be left out, never given as null.
    assert not VALIDATOR.is_valid({**FULL, "title": None})


def test_a_full_rubric_passes_both():
    assert list(VALIDATOR.iter_errors(FULL)) == []
    Rubric.model_validate(FULL)


def _mutations():
    """FULL with one value somewhere replaced by another JSON value or removed."""
    scalars = st.none() | st.booleans() | st.integers(-2000, 2000) | st.floats(-10, 1e6) | st.text(max_size=8)
    values = (
        scalars
        | st.lists(scalars, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "type", "values"]), scalars, max_size=2)
    )

    def paths(node, here=()):
        yield here
        children = (
            node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        )
        for key, child in children:
            yield from paths(child, (*here, key))

    all_paths = [p for p in paths(FULL) if p]
    return st.tuples(st.sampled_from(all_paths), values, st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_what_the_schema_accepts_the_models_accept(mutation):
    path, value, remove = mutation
    data = copy.deepcopy(FULL)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if remove and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    if VALIDATOR.is_valid(data):
        try:
            Rubric.model_validate(data)
        except ValidationError as exc:
            pytest.fail(f"the schema accepts what the models refuse: {exc}")
