"""Grading is bounded: a check over its time limit, or one that raises anything, is that item's error."""

from __future__ import annotations

import threading
import time

import pytest

from grader.probe import StaticProbe
from grader.score import grade
from grader.timebox import CheckRunner, CheckTimeout
from tests.grader.conftest import make_rubric, py_item

CHECKS = "tests.grader.fixtures.slow_checks"


class SlowProbe(StaticProbe):
    """SQL answers take `delay` seconds, as a busy database might."""

    def __init__(self, delay: float):
        super().__init__()
        self.delay = delay

    def sql(self, query, params=None):
        time.sleep(self.delay)
        return [{"ok": 1}]


def _statuses(result):
    return {i.id: (i.status, i.error) for i in result.items}


def test_a_sleeping_check_is_an_error_after_its_limit_and_the_next_check_still_runs():
    rubric = make_rubric(
        [
            py_item("sleeper", f"{CHECKS}:sleeps", timeout_s=0.3),
            py_item("after", f"{CHECKS}:passes"),
        ]
    )
    started = time.monotonic()
    result = grade(rubric, StaticProbe())
    assert time.monotonic() - started < 60  # not the 600 s the check asked for
    by_id = _statuses(result)
    assert by_id["sleeper"] == ("error", "CheckTimeout: the check ran over its 0.3 s limit")
    assert by_id["after"] == ("pass", None)
    assert result.incomplete and str(result) == "1/2"


def test_the_rubric_wide_limit_applies_to_items_without_their_own():
    rubric = make_rubric([py_item("spinner", f"{CHECKS}:spins")], limits={"check_timeout_s": 0.2})
    result = grade(rubric, StaticProbe())
    assert result.items[0].status == "error" and "0.2 s limit" in result.items[0].error


def test_an_abandoned_spinning_check_is_stopped_in_its_thread():
    before = {t.ident for t in threading.enumerate()}
    grade(make_rubric([py_item("spinner", f"{CHECKS}:spins", timeout_s=0.2)]), StaticProbe())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [t for t in threading.enumerate() if t.ident not in before and t.name == "egym-check"]
        if not left:
            break
        time.sleep(0.05)
    assert not left, "the spinning check's thread should stop at its next instruction"


@pytest.mark.parametrize("check, error", [("interrupts", "KeyboardInterrupt"), ("exits", "SystemExit: 3")])
def test_keyboard_interrupt_and_system_exit_in_a_check_are_that_items_error(check, error):
    result = grade(
        make_rubric([py_item("bad", f"{CHECKS}:{check}"), py_item("ok", f"{CHECKS}:passes")]), StaticProbe()
    )
    by_id = _statuses(result)
    assert by_id["bad"][0] == "error" and error in by_id["bad"][1]
    assert by_id["ok"] == ("pass", None)


def test_time_spent_waiting_on_the_probe_does_not_count_against_a_checks_limit():
    rubric = make_rubric(
        [py_item("slow-sql", f"{CHECKS}:queries_slowly", args={"seconds": 0.5}, timeout_s=0.2)]
    )
    result = grade(rubric, SlowProbe(delay=0.5))
    assert result.items[0].status == "pass", result.items[0].error


def test_the_grade_budget_bounds_everything_and_names_what_it_cut():
    rubric = make_rubric(
        [py_item(f"sleeper-{i}", f"{CHECKS}:sleeps", timeout_s=5) for i in range(4)],
        limits={"grade_timeout_s": 0.5},
    )
    started = time.monotonic()
    result = grade(rubric, StaticProbe())
    assert time.monotonic() - started < 5
    errors = [i.error for i in result.items]
    assert all(e and "budget" in e for e in errors), errors


def test_a_revoked_probe_refuses_calls_from_the_abandoned_check():
    calls = []

    class Probe(StaticProbe):
        def sql(self, query, params=None):
            calls.append(query)
            return []

    def late_caller(probe):
        time.sleep(0.4)
        return probe.sql("after the limit")

    runner = CheckRunner()
    with pytest.raises(CheckTimeout):
        runner.run(late_caller, Probe(), limit_s=0.1, deadline=time.monotonic() + 30)
    time.sleep(0.6)
    assert calls == []  # the abandoned check woke up, and its probe said no
