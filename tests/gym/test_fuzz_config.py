"""Fuzzed task.yaml and rubric JSON: a clear one-line error or a value kept exactly; never a traceback, never a hang."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.errors import TaskError
from grader.loader import parse_rubric
from grader.probe import StaticProbe
from grader.score import grade
from gym.tasks import load_task

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1e29", "1e-6", ".inf", "30", "", "ten"]),
)
junk = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
limits = st.dictionaries(
    st.sampled_from(["max_turns", "time_limit_s", "tool_timeout_s", "max_turn", "timeout"]),
    numbers,
    max_size=3,
)
task_fields = st.fixed_dictionaries(
    {"id": st.just("t"), "title": st.text(min_size=1, max_size=20), "world": st.just("w")},
    optional={
        "prompt": st.one_of(st.text(max_size=60), junk),
        "promt": st.text(max_size=10),
        "limits": st.one_of(limits, junk),
        "apps": st.one_of(
            st.lists(st.sampled_from(["db", "chat", "office", "postgres", "mall"]), max_size=3), junk
        ),
        "split": st.one_of(st.sampled_from(["train", "val", "test", "dev"]), junk),
        "pass_threshold": numbers,
        "tags": junk,
    },
)


def _load(text: str):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "t"
        folder.mkdir()
        (folder / "task.yaml").write_text(text)
        return load_task(folder)


def _same(given_value, loaded) -> bool:
    if isinstance(given_value, float) and isinstance(loaded, float) and math.isnan(given_value):
        return math.isnan(loaded)
    if isinstance(given_value, str) and isinstance(loaded, float):
        return float(given_value) == loaded  # YAML reads 1e-6 as text; it is the number written
    return given_value == loaded


@FUZZ
@given(task_fields)
@example({"id": "t", "title": "0", "world": "w", "limits": {"\n": None}})  # a key that is a line break
def test_a_task_file_loads_exactly_or_fails_with_one_line(fields):
    text = yaml.safe_dump(fields, allow_unicode=True)
    try:
        task = _load(text)
    except TaskError as exc:
        assert "\n" not in str(exc) and str(exc).strip()
        return
    parsed = yaml.safe_load(text)
    for key in ("title", "prompt", "split", "pass_threshold"):
        if key in parsed:
            assert _same(parsed[key], getattr(task, key)), (key, parsed[key], getattr(task, key))
    for key, value in (parsed.get("limits") or {}).items():
        assert float(getattr(task.limits, key)) == float(value), (key, value)  # no silent rounding


@FUZZ
@given(st.text(max_size=200))
def test_any_text_as_a_task_file_is_a_task_or_one_line(text):
    try:
        _load(text)
    except TaskError as exc:
        assert "\n" not in str(exc)


checks = st.sampled_from(
    [
        ("transcript.final_answer_contains", {"text": "done"}),
        ("transcript.tool_used", {"name": "bash"}),
        ("sql.row_exists", {"query": "SELECT 1"}),
        ("files.file_exists", {"path": "a.txt"}),
        ("chat.message_exists", {"channel": "general", "regex": "x"}),
        ("sql.no_such_check", {}),
    ]
)
items = st.builds(
    lambda i, points, check, extra: {
        "id": f"i{i}",
        "description": "d",
        "points": points,
        "kind": "python",
        "check": check[0],
        "args": check[1],
        **extra,
    },
    st.integers(0, 5),
    st.one_of(st.integers(-5, 10), numbers),
    checks,
    st.dictionaries(
        st.sampled_from(["gate", "negate", "timeout_s", "section", "pointz", "foreach"]), junk, max_size=2
    ),
)
rubrics = st.fixed_dictionaries(
    {"task": st.sampled_from(["acme/t", "bad task"]), "items": st.lists(items, max_size=4)},
    optional={
        "limits": st.dictionaries(
            st.sampled_from(["check_timeout_s", "grade_timeout_s", "x"]), numbers, max_size=2
        ),
        "damage": st.one_of(st.fixed_dictionaries({}, optional={"points": numbers}), junk),
    },
)


@FUZZ
@given(rubrics)
def test_a_rubric_loads_and_grades_or_fails_with_one_line_per_problem(doc):
    rubric, problems = parse_rubric(json.dumps(doc))
    for problem in problems:
        assert "\n" not in str(problem)
    if problems:  # load_rubric refuses the file with the first one
        return
    assert rubric is not None
    assert rubric.limits.check_timeout_s <= 600 and rubric.limits.grade_timeout_s <= 3600
    result = grade(rubric, StaticProbe(sql={"SELECT 1": [{"x": 1}]}))
    assert len([i for i in result.items if i.section != "damage"]) == len(doc["items"])
    assert 0 <= result.normalized <= 1


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes_as_a_rubric_are_problems_not_exceptions(raw):
    rubric, problems = parse_rubric(raw)
    assert rubric is not None or problems
