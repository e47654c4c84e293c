"""Run store: idempotent plans and records, compare-and-set claims, and crash safety."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from core.errors import StoreError
from core.owner import owner_label
from core.trajectory import AssistantTurn, Step, Trajectory
from grader.grade import Grade, ItemResult
from gym.store import ItemResultRow, Store, resolve_url

TASK = "demo/hello"


def make_grade(earned: float, items: int = 3) -> Grade:
    results = [
        ItemResult(
            id=f"item-{i}",
            points=1,
            status="pass" if i < earned else "fail",
            earned=1.0 if i < earned else 0.0,
        )
        for i in range(items)
    ]
    return Grade(
        task=TASK,
        earned=earned,
        raw_earned=earned - 4,
        possible=items,
        normalized=earned / items,
        items=results,
    )


def make_trajectory(answer: str = "done") -> Trajectory:
    step = Step(index=0, turn=AssistantTurn(content=answer), policy_seconds=0.25)
    return Trajectory(task=TASK, policy="oracle", stop_reason="answered", final_answer=answer, steps=[step])


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "runs.db"))
    yield s
    s.close()


def plan(store: Store, samples: int = 2) -> list:
    store.create_run("r1", policy="oracle", tasks=[TASK], samples=samples)
    return store.add_rollouts("r1", [(TASK, i) for i in range(samples)])


def test_plan_and_record_are_idempotent(store):
    first = plan(store)
    again = plan(store)
    assert [r.id for r in first] == [r.id for r in again]
    assert store.claim(first[0].id, "me")
    for _ in range(2):
        store.record(
            first[0].id, trajectory=make_trajectory(), grade=make_grade(2), passed=False, seconds=1.5
        )
    rows = store.list_rollouts("r1")
    assert len(rows) == 2
    row = store.get_rollout(first[0].id[:8])
    assert len(row.items) == 3
    assert str(row.grade_model()) == "2/3" and row.grade_model().raw == -2  # the raw score is kept
    assert row.trajectory_model().final_answer == "done"
    assert row.policy_seconds == 0.25 and row.turns == 1 and row.status == "done"
    stats = store.run_stats("r1")
    assert (stats["done"], stats["pending"], stats["total"]) == (1, 1, 2)
    assert stats["mean_reward"] == pytest.approx(2 / 3)


def test_done_rollouts_are_never_claimed_again(store):
    rows = plan(store)
    assert store.claim(rows[0].id, "me")
    store.record(rows[0].id, trajectory=make_trajectory(), grade=make_grade(3), passed=True)
    assert not store.claim(rows[0].id, "me")
    assert not store.claim(rows[0].id, "someone-else")


def test_live_owner_keeps_its_claim_dead_owner_is_requeued(store):
    rows = plan(store)
    assert store.claim(rows[0].id, owner_label())  # this (live) process
    assert not store.claim(rows[0].id, "another")
    assert store.requeue_stale("r1") == 0
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    assert store.claim(rows[1].id, owner_label(os.getpid()).rsplit(":", 2)[0] + f":{dead.stdout.strip()}:1")
    assert store.requeue_stale("r1") == 1
    assert store.get_rollout(rows[1].id).status == "pending"
    assert store.get_rollout(rows[0].id).status == "running"


def test_failed_rollout_keeps_its_error_and_can_be_retried(store):
    rows = plan(store)
    store.claim(rows[0].id, "me")
    store.record(rows[0].id, trajectory=None, grade=None, error="SandboxError: boom")
    row = store.get_rollout(rows[0].id)
    assert (row.status, row.error, row.reward) == ("failed", "SandboxError: boom", None)
    assert store.claim(rows[0].id, "me")
    assert store.get_rollout(rows[0].id).attempts == 2


def test_run_with_other_policy_is_refused(store):
    plan(store)
    with pytest.raises(StoreError, match="already exists with policy oracle"):
        store.create_run("r1", policy="null")


def test_run_held_by_live_process_is_refused(store):
    plan(store)
    store.acquire_run("r1", owner_label())
    with pytest.raises(StoreError, match="is being run by"):
        store.acquire_run("r1", "otherhost:1:1")


def test_exception_between_two_writes_leaves_previous_state(store, monkeypatch):
    rows = plan(store)
    store.claim(rows[0].id, "me")
    store.record(rows[0].id, trajectory=make_trajectory("first"), grade=make_grade(1), passed=False)
    original = ItemResultRow.from_model.__func__

    def crash_after_first(cls, position, item):
        if position == 1:
            raise RuntimeError("injected crash")
        return original(cls, position, item)

    monkeypatch.setattr(ItemResultRow, "from_model", classmethod(crash_after_first))
    with pytest.raises(RuntimeError, match="injected"):
        store.record(rows[0].id, trajectory=make_trajectory("second"), grade=make_grade(3), passed=True)
    row = store.get_rollout(rows[0].id)
    assert row.trajectory_model().final_answer == "first"
    assert [i.status for i in row.items] == ["pass", "fail", "fail"]
    assert row.earned == 1


CHILD = """
import os, signal, sys
from gym.store import ItemResultRow, Store
from tests.gym.test_store import make_grade, make_trajectory
store = Store(sys.argv[1])
rid = sys.argv[2]
original = ItemResultRow.from_model.__func__
def die(cls, position, item):
    if position == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # the process dies inside the transaction
    return original(cls, position, item)
ItemResultRow.from_model = classmethod(die)
store.record(rid, trajectory=make_trajectory("second"), grade=make_grade(3), passed=True)
"""


def test_sigkill_mid_transaction_leaves_previous_state(store, tmp_path):
    rows = plan(store)
    store.claim(rows[0].id, "me")
    store.record(rows[0].id, trajectory=make_trajectory("first"), grade=make_grade(1), passed=False)
    path = tmp_path / "runs.db"
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(path), rows[0].id],
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
        capture_output=True,
        text=True,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    reopened = Store(str(path))
    row = reopened.get_rollout(rows[0].id)
    assert (row.earned, row.trajectory_model().final_answer, len(row.items)) == (1, "first", 3)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    reopened.close()


def test_unknown_rollout_and_bad_url_are_store_errors(store, tmp_path):
    with pytest.raises(StoreError, match="no rollout matches 'nope'"):
        store.get_rollout("nope")
    with pytest.raises(StoreError, match="cannot open run store"):
        Store("nosuchdb://x/y")
    assert resolve_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert resolve_url(str(tmp_path / "x.db")).startswith("sqlite:///")


def test_a_store_made_before_a_new_column_gets_it_and_keeps_its_rows(tmp_path):
    """Stores made by an older egym (no `rollouts.step`) open, keep their data, and take the new column."""
    path = tmp_path / "old.db"
    old = Store(str(path))
    plan(old)
    old.close()
    with sqlite3.connect(path) as db:  # what an older egym made: the table without the column
        db.execute("ALTER TABLE rollouts DROP COLUMN step")
        assert "step" not in {row[1] for row in db.execute("PRAGMA table_info(rollouts)")}
    store = Store(str(path))
    assert [r.sample for r in store.list_rollouts("r1")] == [0, 1]
    trained = store.add_rollouts("r1", [("demo/other", 7)], step=3)
    assert store.list_rollouts("r1", step=3)[0].id == trained[0].id
    assert len(store.list_rollouts("r1")) == 3 and store.list_rollouts("r1")[0].step is None
    store.close()
