"""`egym lint` warnings: accepted but probably not meant, each with its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gym.cli import app
from gym.lint import lint

GOOD = {
    "id": "ok",
    "description": "row",
    "points": 2,
    "kind": "python",
    "check": "sql.row_exists",
    "args": {"query": "SELECT 1"},
}


# A penalty on the answer (the reference-answer checks read it).
ANSWER_PENALTY = {
    "id": "no-other",
    "description": "Penalty: other values",
    "points": -1,
    "kind": "python",
    "check": "transcript.final_answer_absent",
    "args": {"regex": "wrong"},
    "baseline_ok": True,
    "baseline_reason": "a penalty",
}


IMPRECISE = "rewards text the agent wrote without charging wrong values"


def _warnings(tmp_path: Path, item: dict, *, imprecise: bool = False) -> list[str]:
    """The item's warnings; those about a text check's missing precision (tests/grader/test_lint_holes.py)
    only when asked for."""
    path = tmp_path / "rubrics" / "acme" / "t.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"task": "acme/t", "items": [GOOD, item, ANSWER_PENALTY]}, indent=1))
    report = lint([path])
    assert not report.problems, report.problems
    found = [str(w).removeprefix(f"{path}:") for w in report.warnings]
    return [w for w in found if imprecise or IMPRECISE not in w]


def _item(**fields) -> dict:
    return {"id": "x", "description": "d", "points": 1, "kind": "python", **fields}


@pytest.mark.parametrize(
    "item, warning",
    [
        (
            _item(points=-3, check="sql.row_absent", args={"query": "SELECT 1"}),
            "15: $.items[1].baseline_ok: warning: a penalty without baseline_ok",
        ),
        (
            _item(points=5, gate=True, check="sql.row_exists", args={"query": "SELECT 1"}),
            "15: $.items[1].points: warning: a gate worth 5 points",
        ),
        (
            _item(check="sql.row_exists", args={"query": "SELECT 1 WHERE '{{customer}}' = 'x'"}),
            "15: $.items[1]: warning: {{customer}} is used literally: this item has no foreach",
        ),
        (
            _item(check="transcript.final_answer_contains", args={"regex": "(unclosed"}),
            "15: $.items[1].args.regex: warning: invalid regular expression '(unclosed': missing ), unterminated subpattern",
        ),
        (
            _item(check="transcript.final_answer_contains", args={"regex": "\\b15\\b"}),
            "15: $.items[1].args.regex: warning: '\\\\b15\\\\b' matches a bare number",
        ),
        (
            _item(check="transcript.final_answer_contains", args={"text": "15"}),
            "15: $.items[1].args.text: warning: '15' is a bare number",
        ),
        (  # Italy's code in any case: "I double-checked it" passed (customer-country-l1-s2)
            _item(check="transcript.final_answer_contains", args={"regex": "\\bIT\\b"}),
            "15: $.items[1].args.regex: warning: '\\\\bIT\\\\b' matches the word 'it' in any case",
        ),
    ],
)
def test_each_silent_mistake_is_warned_at_its_line(tmp_path, item, warning):
    found = _warnings(tmp_path, item)
    assert len(found) == 1 and found[0].startswith(warning), found


def test_a_labelled_number_and_a_declared_penalty_are_fine(tmp_path):
    labelled = _item(check="transcript.final_answer_contains", args={"regex": "breaches\\D{0,20}15"})
    assert _warnings(tmp_path, labelled) == []
    code = _item(check="transcript.final_answer_contains", args={"regex": "\\bIT\\b", "case_sensitive": True})
    assert _warnings(tmp_path / "c", code) == []
    penalty = _item(
        points=-2,
        check="sql.row_absent",
        args={"query": "SELECT 1"},
        baseline_ok=True,
        baseline_reason="a penalty",
    )
    assert _warnings(tmp_path / "p", penalty) == []


def test_an_answer_rewarded_for_matching_text_is_warned_to_become_a_claim(tmp_path):
    contains = _item(check="transcript.final_answer_contains", args={"regex": "breaches\\D{0,20}15"})
    assert _warnings(tmp_path / "a", contains, imprecise=True) == [
        f"15: $.items[1]: warning: transcript.final_answer_contains {IMPRECISE}: an answer listing every "
        "candidate passes it; make it a claims.stated item (docs/rubrics.md#claims)"
    ]


def test_a_mail_sent_item_is_imprecise_only_when_it_matches_text(tmp_path):
    attached = _item(check="mail.sent", args={"to": "lena@client.example", "attachment_of": "quote.xlsx"})
    assert not [w for w in _warnings(tmp_path / "a", attached, imprecise=True) if IMPRECISE in w]
    worded = _item(check="mail.sent", args={"to": "lena@client.example", "regex": "EUR 4,200"})
    assert [w for w in _warnings(tmp_path / "b", worded, imprecise=True) if IMPRECISE in w]


def _task_yaml(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "tasks" / "acme" / "t"
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(body)
    return folder / "task.yaml"


def test_an_unquoted_hash_that_cuts_a_prompt_is_warned_with_its_line(tmp_path):
    file = _task_yaml(
        tmp_path,
        "id: t\ntitle: Weekly list\nworld: acme\nsplit: train  # on purpose\nprompt: Find the open tickets. Post the list in #support\n",
    )
    warnings = [str(w) for w in lint([file]).warnings]
    assert warnings == [
        f"{file}:5: $.prompt: warning: the text is cut at ' #': YAML reads '#support' as a comment, so the value "
        "is 'Find the open tickets. Post the list in'; quote the value or use a block scalar (|)"
    ]


def test_warnings_pass_unless_strict(tmp_path):
    file = _task_yaml(tmp_path, "id: t\ntitle: T\nworld: acme\nprompt: Post it in #sales now\n")
    runner = CliRunner()
    relaxed = runner.invoke(app, ["lint", str(file)])
    assert "1 warning(s)" in relaxed.output and "cut at ' #'" in relaxed.output
    strict = runner.invoke(app, ["lint", "--strict", str(file)])
    assert strict.exit_code == 1 and "FAILED" in strict.output


def test_a_single_word_cut_before_a_channel_is_warned_but_a_comment_is_not(tmp_path):
    file = _task_yaml(
        tmp_path, "id: t\ntitle: T\nworld: acme\nsplit: test  # held out\nprompt: Triage #support\n"
    )
    assert [(w.path, w.line) for w in lint([file]).warnings] == [("$.prompt", 5)]


def test_an_initial_query_items_regex_is_checked_unless_it_has_a_slot(tmp_path):
    foreach = {"initial_query": "SELECT 1 AS n"}
    broken = _item(foreach=foreach, check="transcript.final_answer_contains", args={"regex": "(x{{n}}"})
    assert _warnings(tmp_path, broken) == []  # bound only when grading: compiled then
    broken["args"] = {"regex": "(x"}
    assert [w.split(": warning: ")[0] for w in _warnings(tmp_path / "q", broken)] == [
        "15: $.items[1].args.regex"
    ]


def test_an_items_line_is_its_own_id_not_one_nested_in_its_args(tmp_path):
    path = tmp_path / "rubrics" / "acme" / "t.json"
    path.parent.mkdir(parents=True)
    # The args come first and hold the same "id": "gate" one level down.
    args = {"query": "SELECT 1 WHERE %(id)s = 'gate'", "params": {"id": "gate"}}
    gate = {"args": args, **_item(id="gate", points=4, gate=True, check="sql.row_exists")}
    text = json.dumps({"task": "acme/t", "items": [GOOD, gate]}, indent=1)
    path.write_text(text)
    own_line = text.splitlines().index('   "id": "gate",') + 1
    report = lint([path])
    assert not report.problems, report.problems
    assert [(w.path, w.line) for w in report.warnings] == [("$.items[1].points", own_line)]


def test_an_answer_item_the_prompt_itself_passes_is_warned(tmp_path):
    file = _task_yaml(
        tmp_path, "id: t\ntitle: T\nworld: acme\nprompt: Which segment is Globex in (enterprise or smb)?\n"
    )
    (file.parent / "solution").mkdir()
    (file.parent / "solution" / "actions.yaml").write_text("- answer: enterprise\n")
    rubric = tmp_path / "rubrics" / "acme" / "t.json"
    rubric.parent.mkdir(parents=True)
    segment = _item(
        id="segment", check="transcript.final_answer_contains", args={"regex": "\\benterprise\\b"}
    )
    rubric.write_text(json.dumps({"task": "acme/t", "items": [segment, ANSWER_PENALTY]}))
    warnings = [str(w) for w in lint([file]).warnings]
    assert warnings == [
        f"{file}:$.prompt: warning: the prompt itself passes answer item 'segment' (it contains 'enterprise'): "
        "an answer that repeats the question earns it; label the value or reword the prompt"
    ]


def test_a_reference_answer_that_misses_an_item_or_trips_a_penalty_is_a_problem(tmp_path):
    file = _task_yaml(tmp_path, "id: t\ntitle: T\nworld: acme\nprompt: What did Globex pay?\n")
    (file.parent / "solution").mkdir()
    solution = file.parent / "solution" / "actions.yaml"
    solution.write_text("- answer: Globex paid 149.43 EUR.\n")
    rubric = tmp_path / "rubrics" / "acme" / "t.json"
    rubric.parent.mkdir(parents=True)
    paid = _item(id="paid", check="transcript.final_answer_contains", args={"regex": "150\\.00"})
    other = dict(ANSWER_PENALTY, args={"regex": "(?<![\\d.])149(?![\\d])"})  # the bug money_regex had
    rubric.write_text(json.dumps({"task": "acme/t", "items": [paid, other]}))
    assert [str(p) for p in lint([file]).problems] == [
        f"{solution}:$.answer: the reference answer misses item 'paid'",
        f"{solution}:$.answer: the reference answer trips penalty 'no-other' ('149')",
    ]
