"""`egym lint` finds scoring holes: a penalty that can never fire, a success claim that scores,
a reference answer that a claim item would charge, and a prompt that states its own answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.lint_holes import can_match, prompt_states, reference_misses
from gym.lint import lint
from tests.grader.conftest import make_rubric

STATUS = {"values": ["requested", "approved", "declined"]}


def claim(item_id: str, kind: str, value, points: int = 2, **args) -> dict:
    return {
        "id": item_id,
        "description": item_id,
        "points": points,
        "kind": "python",
        "check": "claims.stated",
        "args": {"kind": kind, "value": value, **args},
    }


@pytest.mark.parametrize(
    ("pattern", "matches"),
    [
        (r"(?!x)x", False),
        (r"$^x", False),
        (r"(?<=a)b(?<!a)", False),
        (r"(?<![\d.,])149(?![\d])", True),
        (r"\bIT\b", True),
        (r"(?i:declin|reject|refus)", True),
        (r"open (support )?tickets?|tickets? (are |still )?open", True),
        (r"[^\W\d_]+@\w+\.com", True),
    ],
)
def test_a_pattern_that_can_never_match_is_told_from_one_that_can(pattern, matches):
    assert can_match(pattern) is matches


def _lint(tmp_path: Path, rubric: dict) -> list[str]:
    path = tmp_path / "rubrics" / "acme" / "t.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"task": "acme/t", **rubric}, indent=1))
    report = lint([path])
    assert not report.problems, report.problems
    return [str(w).split(": warning: ", 1)[1] for w in report.warnings]


def test_a_penalty_that_never_fires_is_warned(tmp_path):
    answer = claim("id", "ticket", "42")
    never = {
        "id": "newer",
        "description": "Penalty: newer tickets",
        "points": -2,
        "kind": "python",
        "check": "transcript.final_answer_absent",
        "args": {"regex": "(?!x)x"},
        "baseline_ok": True,
        "baseline_reason": "a penalty",
    }
    kinds = {"ticket": {"regex": r"#(?P<value>\d+)"}}
    warnings = _lint(tmp_path, {"claims": {"kinds": kinds}, "items": [answer, never]})
    assert warnings == ["the penalty pattern '(?!x)x' can never match: the penalty never fires"]


def test_a_success_claim_that_scores_is_warned_and_one_that_is_charged_is_not(tmp_path):
    # A regex kind is no lexicon: "approved" alone is its one value, and a claim of success passes.
    verdict = {"regex": r"\b(?P<value>approved|declined)\b"}
    warned = _lint(
        tmp_path / "a",
        {"claims": {"kinds": {"verdict": verdict}}, "items": [claim("v", "verdict", "approved")]},
    )
    assert len(warned) == 1 and warned[0].startswith("a message that only claims success")
    # A lexicon holding 'approved' (as a value or a spelling) holds every success word: the claim
    # asserts several and is charged.
    spelled = {
        "values": [{"value": "fine", "regex": r"\bapproved\b"}, {"value": "bad", "regex": r"\bdeclined\b"}]
    }
    for kind in (STATUS, spelled):
        value = "approved" if kind is STATUS else "fine"
        assert (
            _lint(tmp_path / value, {"claims": {"kinds": {"k": kind}}, "items": [claim("s", "k", value)]})
            == []
        )


def test_the_reference_answer_is_graded_against_the_final_answers_claims():
    rubric = make_rubric(
        [claim("head", "employee", "Anna Schmidt"), claim("total", "amount", 300)],
        claims={
            "kinds": {"employee": {"values": ["Anna Schmidt", "Bob Meyer"]}, "amount": {"extract": "amount"}}
        },
    )
    assert reference_misses(rubric, "Who and how much?", "Anna Schmidt; EUR 300.00") == []
    missed = reference_misses(rubric, "Who and how much?", "Anna Schmidt (Bob Meyer's boss); EUR 300.00")
    assert missed == [
        "trips claims.employee (1 wrong or misplaced employee value(s) at 2 each: Bob Meyer (answer))"
    ]
    assert reference_misses(rubric, "Who?", "Anna Schmidt") == ["misses item 'total'"]


def test_a_prompt_that_states_its_own_answer_is_named():
    rubric = make_rubric([claim("status", "status", "approved")], claims={"kinds": {"status": STATUS}})
    assert prompt_states(rubric, "Is it approved, declined or still requested?") == [("status", "approved")]
    assert prompt_states(rubric, "What is the status of Anna's request?") == []
