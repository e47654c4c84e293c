"""Two runs compared episode by episode: pass@1 over samples, the family-resampled interval, McNemar."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from grader.grade import Grade, ItemResult
from gym.batch.paired import compare, compare_replicates, mcnemar_p, outcomes, pass_at_1
from gym.cli import app
from gym.store import Store


def test_mcnemar_is_the_exact_two_sided_sign_test():
    assert mcnemar_p(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_p(1, 9) == pytest.approx(2 * (1 + 10) / 1024)  # C(10,0) + C(10,1)
    assert mcnemar_p(3, 3) == 1.0 and mcnemar_p(0, 0) == 1.0


def test_pass_at_1_averages_a_tasks_samples_and_the_same_run_differs_by_nothing():
    run = {("w/a", 0): True, ("w/a", 1): False, ("w/b", 0): True, ("w/b", 1): True}
    same = compare(run, run, resamples=200)
    assert same.pass_a == same.pass_b == pytest.approx((0.5 + 1.0) / 2)
    assert same.difference == 0 and same.interval == (0, 0)
    assert (same.episodes, same.both, same.only_a, same.only_b) == (4, 3, 0, 0)


def test_a_runs_own_pass_at_1_weighs_each_task_alike_whatever_its_samples():
    run = {("w/a", 0): True, ("w/b", 0): False, ("w/b", 1): False, ("w/b", 2): False}
    assert pass_at_1(run) == pytest.approx((1.0 + 0.0) / 2)  # not 1 pass in 4 samples
    assert pass_at_1(run) == compare(run, run, resamples=10).pass_a


def test_the_interval_resamples_whole_families():
    """Ten instances of one family all gained, ten of another unchanged: two families, so the
    difference is anywhere from 0 to 1, however many instances each holds."""
    before = {(f"w/{fam}-l0-s{seed}", 0): False for fam in ("up", "flat") for seed in range(10)}
    after = {(task, s): task.startswith("w/up") for task, s in before}
    result = compare(before, after, resamples=2000)
    assert result.families == 2 and result.tasks == 20
    assert result.difference == pytest.approx(0.5)
    assert result.interval == (0.0, 1.0)
    assert (result.only_b, result.only_a) == (10, 0) and result.mcnemar_p == pytest.approx(2 / 1024)


def test_replicates_gain_their_mean_and_agreeing_seeds_give_the_family_interval():
    """Three seeds that pass the same episodes: the mean gain is each one's, and resampling the seeds
    adds nothing to the spread of the families (the `up` family gained, `flat` did not)."""
    before = {(f"w/{fam}-l0-s{seed}", 0): False for fam in ("up", "flat") for seed in range(10)}
    after = {(task, s): task.startswith("w/up") for task, s in before}
    result = compare_replicates(before, [after, after, after], resamples=2000)
    assert (result.tasks, result.families, result.runs) == (20, 2, 3)
    assert result.differences == (0.5, 0.5, 0.5) and result.difference == pytest.approx(0.5)
    assert result.interval == (0.0, 1.0)


def test_seeds_that_disagree_widen_the_replicates_interval():
    """One family; one seed gains every episode, two lose none: the families alone cannot spread the
    difference (one cluster), so the whole interval comes from resampling the seeds."""
    before = {(f"w/up-l0-s{seed}", 0): False for seed in range(10)}
    gained = dict.fromkeys(before, True)
    result = compare_replicates(before, [gained, before, before], resamples=2000)
    assert result.differences == (1.0, 0.0, 0.0)
    assert result.difference == pytest.approx(1 / 3)
    # No pick of the gainer (8 draws in 27) to three picks of it (1 in 27, above the 2.5 % tail):
    assert result.interval == (0.0, 1.0)
    assert compare(before, gained).interval == (1.0, 1.0)  # one seed alone: no spread at all


def test_replicates_count_only_the_tasks_every_run_holds():
    before = {("w/a-l0-s0", 0): False, ("w/a-l0-s1", 0): False}
    one = {("w/a-l0-s0", 0): True, ("w/a-l0-s1", 0): True}
    other = {("w/a-l0-s0", 0): True}  # s1 lacks a complete grade here
    result = compare_replicates(before, [one, other], resamples=100)
    assert result.tasks == 1 and result.differences == (1.0, 1.0)
    assert compare_replicates(before, [{("w/b-l0-s0", 0): True}]) is None
    assert compare_replicates(before, []) is None


def test_only_complete_grades_count_and_runs_without_common_tasks_are_not_compared():
    rows = [
        SimpleNamespace(task="w/a", sample=0, status="done", passed=True, incomplete=False),
        SimpleNamespace(task="w/a", sample=1, status="done", passed=False, incomplete=True),
        SimpleNamespace(task="w/a", sample=2, status="failed", passed=None, incomplete=False),
    ]
    assert outcomes(rows) == {("w/a", 0): True}
    assert compare({("w/a", 0): True}, {("w/b", 0): True}) is None


def test_runs_compares_two_runs_episode_by_episode(tmp_path):
    store = Store(str(tmp_path / "runs.db"))
    plan = {"sft": [True, False, False, True], "grpo": [True, True, False, True]}
    tasks = [f"acme/product-price-l0-s{seed}" for seed in range(4)]
    for run_id, passes in plan.items():
        store.create_run(run_id, policy="hf", model=run_id, tasks=tasks, samples=1)
        for row, passed in zip(store.add_rollouts(run_id, [(t, 0) for t in tasks]), passes, strict=True):
            store.claim(row.id, "test")
            item = ItemResult(id="answer", points=1, status="pass" if passed else "fail", earned=int(passed))
            grade = Grade(task=row.task, earned=item.earned, possible=1, normalized=item.earned, items=[item])
            store.record(row.id, trajectory=None, grade=grade, passed=passed, seconds=1.0)
        store.finish_run(run_id, "done")
    store.close()
    args = ["runs", "sft", "grpo", "--store", str(tmp_path / "runs.db")]
    document = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert document["paired"]["pass_a"] == 0.5 and document["paired"]["pass_b"] == 0.75
    assert (document["paired"]["only_b"], document["paired"]["only_a"]) == (1, 0)
    printed = CliRunner().invoke(app, args).stdout
    assert "grpo against sft on 4 tasks (1 families): pass@1 75.0% vs 50.0%, difference +25.0%" in printed
