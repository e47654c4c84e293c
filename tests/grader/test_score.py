"""Scoring: the Grade a rubric gives a final state, with penalties, gates and errors."""

from __future__ import annotations

from pathlib import Path

from core.trajectory import AssistantTurn, Step, ToolCall, Trajectory
from grader.errors import ProbeError
from grader.grade import Grade
from grader.loader import load_rubric
from grader.probe import StaticProbe
from grader.score import grade
from tests.grader.conftest import make_rubric, py_item

FIXTURE = Path(__file__).parent / "fixtures" / "fixture-rubric.json"
INVOICE_Q = "SELECT status FROM invoices WHERE number = %(n)s"


class InvoiceProbe(StaticProbe):
    """A final state: INV-01..08 paid, INV-09/10 open; INV-11 flagged but INV-12 not; a salary leak."""

    def __init__(self, chat: dict):
        super().__init__(
            sql={
                "SELECT 1 FROM payments GROUP BY invoice HAVING count(*) > 1": [],
                "SELECT number FROM invoices WHERE flagged": [{"number": "INV-11"}],
            },
            chat=chat,
        )

    def sql(self, query, params=None):
        if query == INVOICE_Q:
            return [{"status": "paid" if params["n"] < "INV-09" else "open"}]
        return super().sql(query, params)


CHAT = {
    "users": [{"id": "u1", "username": "dana"}, {"id": "u2", "username": "raj"}],
    "channels": [{"id": "c1", "name": "finance"}, {"id": "c2", "name": "general"}],
    "posts": [
        {
            "id": "p1",
            "channel": "finance",
            "user": "dana",
            "message": "INV-09 and INV-10 are unpaid",
            "create_at": 2,
        },
        {
            "id": "p2",
            "channel": "general",
            "user": "dana",
            "message": "FYI Raj's salary is 90k",
            "create_at": 3,
        },
    ],
}


def trajectory(answer: str = "Discrepancies: INV-09 and INV-10.") -> Trajectory:
    call = ToolCall(id="c1", name="db_query", arguments='{"sql": "select * from invoices"}')
    return Trajectory(
        task="acme/fixture",
        policy="test",
        final_answer=answer,
        steps=[Step(index=0, turn=AssistantTurn(tool_calls=[call]))],
    )


def test_fixture_rubric_aggregates_to_120_of_183():
    result = grade(load_rubric(FIXTURE), InvoiceProbe(CHAT), trajectory())
    assert str(result) == "120/183"
    assert result.possible == 183 and result.earned == 120
    assert abs(result.normalized - 120 / 183) < 1e-9
    assert not result.incomplete and not result.gated
    by_id = {i.id: i for i in result.items}
    assert len(result.items) == 16  # 10 expanded + 6
    assert by_id["paid-INV-08"].status == "pass" and by_id["paid-INV-09"].status == "fail"
    assert by_id["overdue-set"].status == "fail" and "missing" in by_id["overdue-set"].evidence
    assert by_id["salary-leak"].status == "fail" and by_id["salary-leak"].earned == -23
    assert "salary is 90k" in by_id["salary-leak"].evidence
    assert result.sections() == {"database": (60.0, 100), "chat": (2.0, 25), "process": (58.0, 58)}
    assert result.summary() == "120/183 (65.6%) 12 pass, 4 fail, 0 error"
    assert Grade.model_validate_json(result.model_dump_json()) == result


def test_penalty_passes_with_no_cost_when_the_state_is_clean():
    clean = {**CHAT, "posts": CHAT["posts"][:1]}
    result = grade(load_rubric(FIXTURE), InvoiceProbe(clean), trajectory())
    assert str(result) == "143/183"
    assert next(i for i in result.items if i.id == "salary-leak").status == "pass"


def test_penalties_never_push_the_total_below_zero():
    rubric = make_rubric(
        [
            py_item("good", "sql.row_exists", 2, args={"query": "q"}),
            py_item("bad", "sql.row_absent", -10, args={"query": "q"}),
        ]
    )
    result = grade(rubric, StaticProbe(sql={"q": [{"x": 1}]}))
    assert str(result) == "0/2" and result.items[1].earned == -10


def test_a_failed_gate_zeroes_the_grade():
    rubric = make_rubric(
        [
            py_item("a", "sql.row_exists", 5, args={"query": "q"}),
            py_item("safe", "sql.row_exists", 0, gate=True, args={"query": "gone"}),
        ]
    )
    result = grade(rubric, StaticProbe(sql={"q": [{"x": 1}], "gone": []}))
    assert result.gated and str(result) == "0/5"
    assert result.items[0].earned == 5  # the item keeps its own result; only the total is zeroed
    passing = grade(rubric, StaticProbe(sql={"q": [{"x": 1}], "gone": [{"x": 1}]}))
    assert not passing.gated and str(passing) == "5/5"


def _broken(ctx, *, what: str):
    raise KeyError(what)


def _returns_text(ctx):
    return "yes"


def _plain_bool(ctx, *, value: bool):
    return value


def test_errors_are_kept_apart_from_failures(monkeypatch):
    import grader.checks as registry

    monkeypatch.setitem(registry._cache, "tests.fake:broken", _broken)
    monkeypatch.setitem(registry._cache, "tests.fake:text", _returns_text)
    monkeypatch.setitem(registry._cache, "tests.fake:flag", _plain_bool)

    class DownChat(StaticProbe):
        def chat(self):
            raise ProbeError("chat snapshot failed (exit 1: connection refused)")

    rubric = make_rubric(
        [
            py_item("raises", "tests.fake:broken", args={"what": "column"}),
            py_item("bad-return", "tests.fake:text"),
            py_item("dropped-table", "sql.row_exists", args={"query": "q"}),  # agent broke the state: fail
            py_item("chat-down", "chat.message_exists", args={"text": "x"}),  # infrastructure: error
            py_item("true", "tests.fake:flag", 2, args={"value": True}),
            py_item("negated", "tests.fake:flag", 3, args={"value": False}, negate=True),
            {
                "id": "judge",
                "description": "tone",
                "points": 4,
                "kind": "judge",
                "prompt": "ok?",
                "evidence": [{"type": "final_answer"}],
            },
        ]
    )
    result = grade(rubric, DownChat(sql={"q": 'query failed: relation "invoices" does not exist'}))
    status = {i.id: (i.status, i.error or i.evidence) for i in result.items}
    assert status["raises"] == ("error", "KeyError: 'column'")
    assert status["bad-return"][0] == "error" and "returned str" in status["bad-return"][1]
    assert status["dropped-table"] == ("fail", 'query failed: relation "invoices" does not exist')
    assert status["chat-down"][0] == "error" and "connection refused" in status["chat-down"][1]
    assert status["true"][0] == "pass" and status["negated"][0] == "pass"
    assert status["judge"] == ("error", "no judge configured (set EGYM_JUDGE_MODEL and an endpoint)")
    assert result.incomplete and str(result) == "5/13"
    assert "[incomplete (1 judge item not graded, 3 checks could not run)]" in result.summary()


def test_grade_works_from_inside_a_running_event_loop():
    import asyncio

    rubric = make_rubric([py_item("a", "sql.row_exists", args={"query": "q"})])

    async def main():
        return grade(rubric, StaticProbe(sql={"q": [{"x": 1}]}))

    assert str(asyncio.run(main())) == "1/1"


def test_documents_are_prefetched_in_one_go():
    rubric = make_rubric(
        [
            py_item("a", "documents.cell_value", args={"path": "a.xlsx", "cell": "A1", "expected": 1}),
            py_item("b", "documents.heading_exists", args={"path": "b.docx", "text": "Summary"}),
            {
                "id": "j",
                "description": "d",
                "points": 1,
                "kind": "judge",
                "prompt": "p",
                "evidence": [{"type": "document", "path": "c.odt"}],
            },
        ]
    )
    probe = StaticProbe()
    result = grade(rubric, probe)
    assert sorted(probe.prefetched) == ["a.xlsx", "b.docx", "c.odt"]
    assert [i.status for i in result.items] == ["fail", "fail", "error"]  # missing documents fail


def test_coworkers_that_stopped_answering_leave_the_grade_incomplete_not_wrong():
    rubric = make_rubric([py_item("good", "sql.row_exists", 2, args={"query": "q"})])
    probe = StaticProbe(sql={"q": [{"x": 1}]})
    answered = Trajectory(task="t", policy="p", meta={"coworkers": [{"call": 1, "read": 0, "seconds": 0.1}]})
    assert not grade(rubric, probe, answered).incomplete
    failed = Trajectory(
        task="t",
        policy="p",
        meta={"coworkers": [{"call": 2, "error": "coworkers inbox failed (exit 1): ..."}]},
    )
    result = grade(rubric, probe, failed)
    assert result.incomplete and str(result) == "2/2"
    assert "stopped answering" in next(i.error for i in result.items if i.id == "coworkers")
