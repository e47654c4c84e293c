"""Rubric files: schema errors name the file and JSON path; random input never escapes as an exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import RubricError
from grader.loader import check_rubric, load_rubric, parse_rubric
from grader.rubric import JudgeItem, PythonItem

VALID = {
    "task": "acme/reconcile",
    "judge": {"models": ["judge-a"], "rule": "majority"},
    "items": [
        {
            "id": "row",
            "description": "Invoice flagged",
            "points": 3,
            "kind": "python",
            "check": "sql.row_exists",
            "args": {"query": "SELECT 1"},
            "section": "database",
        },
        {
            "id": "tone",
            "description": "Polite",
            "points": 2,
            "kind": "judge",
            "prompt": "Is it polite?",
            "evidence": [{"type": "channel", "channel": "finance", "user": "dana"}, {"type": "final_answer"}],
            "scale": {"min": 1, "max": 5, "pass": 4},
        },
        {
            "id": "leak",
            "description": "No salary leak",
            "points": -5,
            "kind": "python",
            "check": "chat.message_absent",
            "args": {"channel": "general", "regex": "salary"},
            "baseline_ok": True,
            "baseline_reason": "penalties pass on the untouched state",
        },
    ],
}


def _problems(data) -> list[str]:
    _, problems = parse_rubric(json.dumps(data), "r.json")
    return [str(p) for p in problems]


def test_a_valid_rubric_loads_into_typed_items(tmp_path):
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(VALID))
    rubric = load_rubric(path)
    assert [type(i) for i in rubric.items] == [PythonItem, JudgeItem, PythonItem]
    assert rubric.items[1].scale.threshold == 4
    assert rubric.items[1].evidence[0].channel == "finance"
    assert rubric.items[2].points == -5 and rubric.items[2].baseline_ok
    assert len(rubric.hash) == 16 and rubric.path == path


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["items"][0].pop("check"), "r.json:$.items[0]: 'check' is a required property"),
        (
            lambda d: d["items"][0].update(chek="x"),
            "r.json:$.items[0]: unknown key 'chek' (did you mean 'check'?)",
        ),
        (
            lambda d: d["items"][0].update(points=1.5),
            "r.json:$.items[0].points: 1.5 is not of type 'integer'",
        ),
        (lambda d: d["items"][1].pop("evidence"), "r.json:$.items[1]: 'evidence' is a required property"),
        (
            lambda d: d["items"][1]["evidence"].append({"type": "sql"}),
            "r.json:$.items[1].evidence[2]: 'query' is a required property",
        ),
        (
            lambda d: d["items"][1].update(scale={"min": 1}),
            "r.json:$.items[1].scale: 'max' is a required property",
        ),
        (
            lambda d: d["items"][2].pop("baseline_reason"),
            "r.json:$.items[2]: 'baseline_reason' is a dependency of 'baseline_ok'",
        ),
        (
            lambda d: d["items"][0].update(kind="pyton"),
            "r.json:$.items[0].kind: 'pyton' is not one of 'python', 'judge'",
        ),
        (
            lambda d: d["items"][0].update(foreach={"values": [1], "initial_query": "x"}),
            "r.json:$.items[0].foreach: give exactly one of 'values', 'values_file', 'initial_query'",
        ),
        (
            lambda d: d["items"][1].update(id="row"),
            "r.json:$.items[1].id: duplicate id 'row' (also $.items[0])",
        ),
        (lambda d: d.update(task="no-slash"), "r.json:$.task: 'no-slash' does not match"),
    ],
)
def test_each_schema_problem_names_the_json_path(mutate, expected):
    data = json.loads(json.dumps(VALID))
    mutate(data)
    problems = _problems(data)
    assert any(p.startswith(expected) for p in problems), problems
    if "kind" in expected:
        assert len(problems) == 1, problems  # a bad kind does not also drown the item in branch errors


def test_only_penalties_means_nothing_is_possible():
    data = {"task": "acme/x", "items": [{**VALID["items"][2]}]}
    assert _problems(data) == [
        "r.json:$.items: no item has positive points, so the total possible would be 0"
    ]


def test_task_must_match_the_file_location(tmp_path):
    path = tmp_path / "rubrics" / "acme" / "other-task.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(VALID))
    _, problems = check_rubric(path)
    assert [p.path for p in problems] == ["$.task"]
    assert "acme/other-task" in problems[0].message


def test_load_rubric_raises_one_line_with_file_and_path(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"task": "acme/x", "items": [}')
    with pytest.raises(RubricError) as info:
        load_rubric(path)
    assert str(info.value).startswith(f"{path}:$: invalid JSON")
    assert "\n" not in str(info.value)


def test_missing_file_is_a_problem_not_a_crash(tmp_path):
    _, problems = check_rubric(tmp_path / "nope.json")
    assert problems[0].path == "$" and "cannot read" in problems[0].message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)
item_keys = st.sampled_from(
    [
        "id",
        "description",
        "points",
        "kind",
        "check",
        "args",
        "prompt",
        "evidence",
        "scale",
        "panel",
        "foreach",
        "gate",
        "section",
        "baseline_ok",
        "negate",
    ]
)
rubric_like = st.fixed_dictionaries(
    {
        "task": st.sampled_from(["acme/x", "x", 3]),
        "items": st.lists(st.dictionaries(item_keys, json_values, max_size=8), max_size=4),
    }
)


@st.composite
def mutated_valid(draw):
    """The valid rubric with one random key of one item replaced by random JSON (reaches the deep branches)."""
    data = json.loads(json.dumps(VALID))
    item = draw(st.sampled_from(data["items"]))
    item[draw(item_keys)] = draw(json_values)
    return data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, rubric_like, mutated_valid(), st.binary(max_size=200)))
def test_random_input_never_raises_out_of_the_loader(data):
    raw = data if isinstance(data, bytes) else json.dumps(data)
    rubric, problems = parse_rubric(raw, "fuzz.json")
    assert rubric is not None or problems
    assert all(str(p).startswith("fuzz.json:$") and "\n" not in str(p) for p in problems)


@pytest.mark.parametrize(
    "fragment, message",
    [
        (
            '"limits": {"check_timeout_s": 1e9}',
            "$.limits.check_timeout_s: 1000000000.0 is out of range (must be ≤ 600)",
        ),
        ('"limits": {"grade_timeout_s": 0}', "$.limits.grade_timeout_s: 0 is out of range (must be > 0)"),
        ('"limits": {"check_timeout_s": NaN}', "$: invalid JSON: NaN is not a JSON number"),
        ('"damage": {"points": -5}', "$.damage.points: -5 is out of range (must be ≥ 0)"),
        ('"damage": {"allow": [{"table": "t", "files": "*"}]}', "$.damage.allow[0]"),
    ],
)
def test_grading_limits_and_damage_settings_are_refused_by_name(fragment, message):
    text = '{"task": "acme/t", %s, "items": [{"id": "a", "description": "d", "points": 1, "kind": "python", "check": "sql.row_exists", "args": {"query": "SELECT 1"}}]}'
    rubric, problems = parse_rubric(text % fragment)
    assert rubric is None and message in str(problems[0]), problems
