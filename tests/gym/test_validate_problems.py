"""validate's judgement on scores, without sandboxes: raw scores, damage and penalties at baseline."""

from __future__ import annotations

from grader.grade import ItemResult
from gym.validate import Score, TaskReport, ValidateOptions, judge_problems


def _score(*items: ItemResult) -> Score:
    from grader.grade import Grade
    from gym.validate import restrict

    return restrict(
        Grade(task="w/t", earned=0, possible=10, normalized=0, items=list(items)), with_judge=True
    )


WORK = ItemResult(id="work", points=10, status="fail")
DAMAGE_FAIL = ItemResult(id="damage.rows", section="damage", points=-1, status="fail", earned=-1)
DAMAGE_PASS = ItemResult(id="damage.rows", section="damage", points=-1, status="pass")


def _report(destroy: Score) -> TaskReport:
    report = TaskReport(
        "w/t", oracle=_score(ItemResult(id="work", points=10, status="pass", earned=10), DAMAGE_PASS)
    )
    report.null = report.baseline = _score(WORK, DAMAGE_PASS)
    report.cheats = {"cheat-destroy": destroy}
    judge_problems(report, ValidateOptions(), set())
    return report


def test_restrict_keeps_the_raw_score_below_zero():
    score = _score(WORK, DAMAGE_FAIL)
    assert (score.earned, score.raw, str(score)) == (0.0, -1.0, "0/10 (raw -1)")


def test_destruction_that_costs_nothing_is_a_problem():
    assert _report(_score(WORK, DAMAGE_FAIL)).ok
    uncharged = _report(_score(WORK, DAMAGE_PASS))
    assert [p.split(",")[0] for p in uncharged.problems] == ["cheat-destroy scored 0/10"]
    assert "not below null 0/10" in uncharged.problems[0]


def test_a_gate_that_fails_on_the_untouched_state_is_named():
    report = TaskReport("w/t", oracle=_score(ItemResult(id="work", points=10, status="pass", earned=10)))
    report.null = _score(WORK)
    report.baseline = _score(WORK, ItemResult(id="sane", points=0, gate=True, status="fail"))
    judge_problems(report, ValidateOptions(), set())
    assert any(p.startswith("fires on the untouched initial state") and "sane" in p for p in report.problems)
