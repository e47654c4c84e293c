"""The dashboard's SQL aggregates agree with the same numbers computed in Python from the stored rows.

The store is filled through its own API (create_run/add_rollouts/claim/record);
grades are built here with chosen rewards so edge cases (bin edges,
incomplete grades, failed rollouts) are exercised on purpose.
"""

from __future__ import annotations

import pytest

from core.errors import StoreError
from grader.grade import Grade, ItemResult
from gym.calibrate import band_for, wilson_interval
from gym.dashboard import queries
from gym.dashboard.app import open_store
from gym.store import RunRow, Store
from tests.gym.test_store_postgres import pg_url  # noqa: F401 - the PostgreSQL server fixture


def grade(task: str, passes: list[bool], *, incomplete: bool = False) -> Grade:
    items = [
        ItemResult(
            id=f"i{k}",
            description=f"item {k}",
            section="s" if k % 2 else None,
            points=10,
            status="pass" if ok else "fail",
            earned=10 if ok else 0,
        )
        for k, ok in enumerate(passes)
    ]
    if incomplete:
        items.append(ItemResult(id="judge", kind="judge", points=0, status="error", error="endpoint down"))
    earned = sum(i.earned for i in items)
    possible = 10 * len(passes)
    return Grade(
        task=task,
        earned=earned,
        possible=possible,
        normalized=earned / possible,
        incomplete=incomplete,
        items=items,
    )


def add_run(store: Store, run_id: str, policy: str, plan: dict[str, list[object]]) -> None:
    """plan: task -> per sample either a list of item outcomes, ('incomplete', outcomes), or None (failed)."""
    store.create_run(run_id, policy=policy, tasks=list(plan), samples=max(map(len, plan.values())))
    rows = store.add_rollouts(run_id, [(t, i) for t, samples in plan.items() for i in range(len(samples))])
    for row in rows:
        spec = plan[row.task][row.sample]
        assert store.claim(row.id, "test")
        if spec is None:
            store.record(row.id, trajectory=None, grade=None, error="sandbox failed", seconds=1.0)
            continue
        incomplete = isinstance(spec, tuple)
        g = grade(row.task, spec[1] if incomplete else spec, incomplete=incomplete)
        store.record(row.id, trajectory=None, grade=g, passed=g.normalized >= 0.8, seconds=2.0 + row.sample)
    store.finish_run(run_id, "done")


T, F = True, False


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.docker)])
def store(request, tmp_path):
    """The same rows in a SQLite file and in a real PostgreSQL (the team store)."""
    url = str(tmp_path / "runs.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store(url)
    add_run(s, "r1", "null", {"w/a": [[F, F, F, F, F], [T, F, F, F, F]], "w/b": [[F] * 5, None]})
    add_run(s, "r2", "oracle", {"w/a": [[T] * 5, [T, T, T, T, F], ("incomplete", [T] * 5)]})
    add_run(s, "r3", "mixed", {"w/a": [[T, T, F, F, F], [T] * 5, [T, T, T, T, T], [F] * 5]})
    yield s
    if request.param == "postgresql":
        with s.engine.begin() as conn:
            conn.exec_driver_sql("TRUNCATE runs, rollouts, item_results CASCADE")
    s.close()


def test_run_page_pages_newest_first_with_stats_equal_to_the_stores(store):
    with store.session() as s:
        first = queries.run_page(s, 1, 2)
        second = queries.run_page(s, 2, 2)
    assert first.total == 3 and first.pages == 2
    assert [r.run.id for r in first.items] == ["r3", "r2"]
    assert [r.run.id for r in second.items] == ["r1"]
    for summary in first.items + second.items:
        expected = store.run_stats(summary.run.id)
        assert summary.stats.total == expected["total"]
        assert summary.stats.done == expected["done"]
        assert summary.stats.failed == expected["failed"]
        assert summary.stats.mean_reward == pytest.approx(expected["mean_reward"])
        assert summary.stats.pass_rate == pytest.approx(expected["pass_rate"])
        assert summary.duration is not None and summary.duration >= 0


def test_task_table_counts_failed_rollouts_and_means_over_done_only(store):
    with store.session() as s:
        table = dict(queries.task_table(s, "r1"))
    assert set(table) == {"w/a", "w/b"}
    b = table["w/b"]
    assert (b.total, b.done, b.failed, b.scored) == (2, 1, 1, 1)
    assert b.mean_reward == 0.0 and b.pass_rate == 0.0
    a = table["w/a"]
    assert a.mean_reward == pytest.approx((0.0 + 0.2) / 2)
    assert a.mean_seconds == pytest.approx((2.0 + 3.0) / 2)


def test_histogram_bins_match_rewards_including_edges(store):
    with store.session() as s:
        counts, edges = queries.score_histogram(s, task="w/a")
        only_r3, _ = queries.score_histogram(s, run_id="r3")
    rewards = [r.reward for r in store.list_rollouts(task="w/a", status="done")]
    expected = [0] * 10
    for reward in rewards:
        expected[min(int(reward * 10 + 1e-9), 9)] += 1
    assert counts == expected
    assert edges[0] == 0 and edges[-1] == 1 and len(edges) == 11
    assert only_r3 == [1, 0, 0, 0, 1, 0, 0, 0, 0, 2]  # 0.0, 0.4, 1.0, 1.0 (1.0 lands in the last bin)


def test_item_rates_sorted_most_failed_first_and_filtered_by_run(store):
    with store.session() as s:
        everywhere = queries.item_rates(s, "w/a")
        in_r2 = queries.item_rates(s, "w/a", "r2")
    by_id = {r.item_id: r for r in everywhere}
    rows = store.list_rollouts(task="w/a", status="done", with_items=True)
    for item_id, rate in by_id.items():
        results = [i for r in rows for i in r.items if i.item_id == item_id]
        assert rate.graded == len(results)
        assert rate.passed == sum(i.status == "pass" for i in results)
    rates = [r.pass_rate for r in everywhere]
    assert rates == sorted(rates)
    assert by_id["judge"].errors == 1
    r2 = {r.item_id: (r.passed, r.graded) for r in in_r2}
    assert r2["i4"] == (2, 3) and r2["i0"] == (3, 3)


def test_task_history_follows_calibrate_leaving_incomplete_grades_out(store):
    with store.session() as s:
        history = queries.task_history(s, "w/a")
    assert [h.run_id for h in history] == ["r1", "r2", "r3"]
    r2 = history[1].stats
    assert r2.incomplete == 1
    cal = r2.calibration
    assert (cal.passes, cal.n) == (2, 2)  # the incomplete perfect score is not counted
    assert (cal.low, cal.high) == pytest.approx(wilson_interval(2, 2))
    assert cal.band == band_for(1.0) == "too-easy"
    r3 = history[2].stats.calibration
    assert (r3.passes, r3.n, r3.band) == (2, 4, "target")


def test_pass_counts_keep_each_policy_and_model_apart(store):
    add_run(store, "r4", "null", {"w/a": [[T] * 5]})  # a second null run adds up with the first
    store.create_run("r5", policy="hf", model="smollm2", tasks=["w/a"])
    with store.session() as s:
        counts = {(task, label): n for task, label, n in queries.pass_counts(s)}
    assert counts["w/a", "null"] == queries.PassCounts(rollouts=3, complete=3, passed=1)
    assert counts["w/a", "oracle"] == queries.PassCounts(
        rollouts=3, complete=2, passed=2
    )  # incomplete left out
    assert counts["w/a", "mixed"].calibration.pass_rate == 0.5
    assert counts["w/b", "null"] == queries.PassCounts(rollouts=2, complete=1, passed=0)  # one failed rollout
    assert ("w/a", "hf smollm2") not in counts  # a run without rollouts has no figures


def test_pass_counts_of_a_family_hold_its_instances_only(store):
    plan = {key: [[T] * 5] for key in ("w/x-l0-s1", "w/x-l1-s20", "w/x-long-l0-s1", "w/x", "w/xy-l0-s1")}
    add_run(store, "r6", "oracle", plan)
    with store.session() as s:
        keys = {task for task, _, _ in queries.pass_counts(s, family="w/x")}
    assert keys == {"w/x-l0-s1", "w/x-l1-s20"}


def test_rollout_page_is_paged_and_filtered(store):
    with store.session() as s:
        page = queries.rollout_page(s, 2, 3, task="w/a")
        everything = queries.rollout_page(s, 1, 100, task="w/a")
        exists = queries.task_exists(s, "w/a"), queries.task_exists(s, "w/nope")
    assert page.total == 9 and page.pages == 3 and len(page.items) == 3
    assert all(r.task == "w/a" for r in page.items)
    assert [r.id for r in everything.items[3:6]] == [r.id for r in page.items]
    assert exists == (True, False)


def test_filters_by_run_kind_and_rollout_status(store):
    store.create_run("cal", policy="null", kind="calibrate")
    with store.session() as s:
        calibrations = queries.run_page(s, 1, 10, kind="calibrate")
        kinds = queries.run_kinds(s)
        failed = queries.rollout_page(s, 1, 10, run_id="r1", status="failed")
    assert [r.run.id for r in calibrations.items] == ["cal"] and calibrations.total == 1
    assert kinds == ["batch", "calibrate"]
    assert [(r.task, r.sample, r.error) for r in failed.items] == [("w/b", 1, "sandbox failed")]


def test_the_dashboards_connections_are_read_only(store):
    reader = open_store(store.url)
    try:
        with reader.session() as s:
            assert queries.run_page(s, 1, 5).total == 3  # reads work
        with pytest.raises(StoreError, match="(?i)read.?only|query_only"), reader.session() as s:
            s.add(RunRow(id="sneaky", policy="x"))
    finally:
        reader.close()
    assert [r.id for r in store.list_runs()] == ["r3", "r2", "r1"]
