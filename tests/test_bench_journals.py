"""The long benches' committed journals: a later session (a fresh checkout) goes on where one stopped.

bench_bands.py calibrates one family at a time and appends its outcomes to a journal; bench_learning.py
keeps each evaluated arm. Both must skip what the journal holds, and refuse to pool the work of two
different start models. The `egym calibrate` processes and the run store are stood in for here: what
is tested is the bookkeeping around them.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from bench import bench_bands, bench_learning, common
from core.trajectory import AssistantTurn, Step, Trajectory
from grader.grade import Grade
from gym.store import Store

KEY = "hf:sft/model@0123456789ab"


def _row(task: str, reward: float, sample: int = 0) -> SimpleNamespace:
    start = dt.datetime(2026, 11, 27, 20, 0, sample)
    return SimpleNamespace(
        task=task,
        sample=sample,
        status="done",
        reward=reward,
        passed=reward >= 1.0,
        incomplete=None,
        started_at=start,
        finished_at=start + dt.timedelta(seconds=30),
    )


class FakeStore:
    rows: dict[str, list] = {}

    def __init__(self, path: str):
        pass

    def list_rollouts(self, run: str) -> list:
        return self.rows.get(run, [])

    def close(self) -> None:
        pass


PASSING: set[str] = set()  # the instances whose stood-in rollout passes


def _levels(ref: str, seeds: str) -> dict[int, list[str]]:
    return {level: [f"{ref}-l{level}-s{seed}" for seed in range(12)] for level in (0, 1)}


@pytest.fixture
def bands(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_bands, "ROOT", tmp_path)
    monkeypatch.setattr(bench_bands, "JOURNAL", tmp_path / "bands-rollouts.jsonl")
    monkeypatch.setattr(bench_bands, "Store", FakeStore)
    monkeypatch.setattr(bench_bands, "level_instances", _levels)
    FakeStore.rows = {}
    PASSING.clear()
    calls = []

    def run(command, cwd):  # `egym calibrate <instances> -k 1 ...`: one stored rollout per new instance
        calls.append(command)
        instances = command[command.index("calibrate") + 1 : command.index("-k")]
        rows = FakeStore.rows.setdefault(command[command.index("--run") + 1], [])
        stored = {row.task for row in rows}
        rows += [_row(task, float(task in PASSING)) for task in instances if task not in stored]
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(bench_bands.subprocess, "run", run)
    return calls


def test_an_outcome_reads_back_as_it_was_written():
    outcome = bench_bands.Outcome.of("acme/deal-owner", KEY, _row("acme/deal-owner-l0-s1", 0.5))
    assert bench_bands.Outcome.parse(outcome.line()) == outcome


def test_calibration_goes_on_with_the_families_the_journal_lacks(bands, tmp_path):
    done = bench_bands.Outcome.of("acme/a", KEY, _row("acme/a-l0-s0", 0.0))
    bench_bands.JOURNAL.write_text(done.line() + "\n")
    progress = list(
        bench_bands.calibrate_families(
            ["acme/a", "acme/b"], "0-11", 4, tmp_path / "model", KEY, tmp_path / "db"
        )
    )
    assert [command[command.index("--run") + 1] for command in bands] == [f"{bench_bands.RUN}-b"]
    assert [o.family for o in progress[-1]] == ["acme/a"] + ["acme/b"] * 12
    assert bench_bands.journal() == progress[-1]  # committed as it landed
    rerun = list(
        bench_bands.calibrate_families(
            ["acme/a", "acme/b"], "0-11", 4, tmp_path / "model", KEY, tmp_path / "db"
        )
    )
    assert rerun == [] and len(bands) == 1  # nothing left to do


def test_a_level_gets_its_second_six_instances_only_after_a_pass_in_its_first(bands, tmp_path):
    PASSING.add("acme/a-l1-s2")
    (outcomes,) = bench_bands.calibrate_families(
        ["acme/a"], "0-11", 4, tmp_path / "model", KEY, tmp_path / "db"
    )
    first, second = (command[command.index("calibrate") + 1 : command.index("-k")] for command in bands)
    assert first == [f"acme/a-l{level}-s{seed}" for level in (0, 1) for seed in range(6)]
    assert second == [f"acme/a-l1-s{seed}" for seed in range(12)]  # the whole level, so its band pools all 12
    assert sorted(o.task for o in outcomes) == sorted(first + second[6:])


def test_the_first_round_keeps_what_an_earlier_design_already_sampled():
    levels = _levels("acme/a", "0-11")
    earlier = [_row("acme/a-l0-s11", 0.0), _row("acme/a-l0-s7", 0.0)]
    earlier[1].status = "running"  # cut off: it is not kept for its own sake
    first, second = bench_bands.rounds(levels, earlier)
    assert first == [*levels[0][:6], "acme/a-l0-s11", *levels[1][:6]] and second == []


def test_the_journal_leaves_out_a_rollout_no_round_asks_for(bands, tmp_path):
    cut_off = _row("acme/a-l0-s9", 0.0)
    cut_off.status = "running"  # killed mid-rollout under the earlier design
    FakeStore.rows = {f"{bench_bands.RUN}-a": [cut_off]}
    (outcomes,) = bench_bands.calibrate_families(
        ["acme/a"], "0-11", 4, tmp_path / "model", KEY, tmp_path / "db"
    )
    assert len(outcomes) == 12 and "acme/a-l0-s9" not in {o.task for o in outcomes}


def test_calibration_refuses_a_journal_of_another_model(bands, tmp_path):
    other = bench_bands.Outcome.of("acme/a", "hf:sft/model@ffffffffffff", _row("acme/a-l0-s0", 0.0))
    bench_bands.JOURNAL.write_text(other.line() + "\n")
    with pytest.raises(SystemExit, match="did not reproduce"):
        list(bench_bands.calibrate_families(["acme/b"], "0-11", 4, tmp_path / "model", KEY, tmp_path / "db"))
    assert bands == []


def test_an_arm_lands_with_its_outcomes_and_refuses_another_start(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "learning-arms.json")
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    FakeStore.rows = {"eval-sft": [_row("acme/x-l0-s11", 1.0, 0), _row("acme/x-l0-s11", 0.0, 1)]}
    bench_learning.Arms(KEY).land("sft", "eval-sft", training_seconds=12.5)

    again = bench_learning.Arms(KEY)  # as a later session reads it
    assert "sft" in again and "grpo-s0" not in again
    assert again.outcomes("sft") == {("acme/x-l0-s11", 0): True, ("acme/x-l0-s11", 1): False}
    assert again.done["sft"]["training_seconds"] == 12.5 and again.done["sft"]["eval_seconds"] == 31.0
    assert again.done["sft"]["landed_on"] == {"cpu": common.cpu(), "mkl_cbwr": os.environ.get("MKL_CBWR", "")}
    assert json.loads(bench_learning.ARMS.read_text())["start"] == KEY
    with pytest.raises(SystemExit, match="did not reproduce"):
        bench_learning.Arms("hf:sft/model@ffffffffffff")


def test_a_machine_whose_kernels_compute_other_bits_stops_before_training_the_sft(tmp_path, monkeypatch):
    """The first machine whose SFT reproduced the start leaves its numerics probe in the arms' file; another
    kind of machine stops in seconds, where the SFT's key would have told after an hour."""
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "learning-arms.json")
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    FakeStore.rows = {"eval-sft": [_row("acme/x-l0-s11", 1.0, 0)]}
    bench_learning.Arms(KEY).land("sft", "eval-sft")  # landed before the probe existed
    bench_learning.check_numerics("aaaa")  # nothing to check against yet

    bench_learning.Arms(KEY, numerics={"probe": "aaaa", "cpu": "AMD EPYC"})  # reproduced: recorded
    bench_learning.Arms(KEY, numerics={"probe": "bbbb", "cpu": "another"})  # the first one is kept
    kept = json.loads(bench_learning.ARMS.read_text())
    assert kept["numerics"] == {"probe": "aaaa", "cpu": "AMD EPYC"} and list(kept["arms"]) == ["sft"]
    FakeStore.rows = {"eval-grpo-s0": [_row("acme/x-l0-s11", 0.0, 0)]}
    bench_learning.Arms(KEY).land("grpo-s0", "eval-grpo-s0")
    assert json.loads(bench_learning.ARMS.read_text())["numerics"]["probe"] == "aaaa"  # landing keeps it

    bench_learning.check_numerics("aaaa")
    monkeypatch.setattr(common, "MKL_BRANCHES", ("COMPATIBLE",))  # one probe, ten seconds
    with pytest.raises(SystemExit, match=r"computes other bits .*AMD EPYC; numerics probe bbbb, not aaaa"):
        bench_learning.check_numerics("bbbb")


def test_the_numerics_probe_repeats_and_another_mkl_branch_that_computes_the_arms_bits_is_taken(
    tmp_path, monkeypatch
):
    """Under the pins the probe repeats, and MKL's branches compute other bits. MKL_CBWR=AVX2 is MKL's AVX2
    branch on an Intel CPU and its AUTO branch elsewhere: a machine whose probe differs from the arms' goes on
    when another branch gives the arms' bits, its children computing under that branch."""
    for name, value in common.PINNED_NUMERICS.items():
        monkeypatch.setenv(name, value)
    pinned = common.numerics_probe()
    assert len(pinned) == 16 and common.numerics_probe() == pinned
    compatible = common.numerics_probe(MKL_CBWR="COMPATIBLE")  # MKL's SSE2 branch: other float sums
    assert compatible != pinned
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "learning-arms.json")
    bench_learning.Arms(KEY, numerics={"probe": compatible, "cpu": "AMD EPYC"})  # as if computed there
    monkeypatch.setattr(common, "MKL_BRANCHES", ("SSE4_2", "COMPATIBLE"))

    bench_learning.check_numerics(pinned)
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"  # what numerics_probe and the bench's children run with


def test_the_learning_rate_is_chosen_by_val_pass_rate_and_a_tie_keeps_the_first(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "learning-arms.json")
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    first, second = bench_learning.LEARNING_RATES
    episodes = [f"acme/x-l0-s{seed}" for seed in (8, 18)]

    def land(lr: str, rewards: list[float]) -> bench_learning.Arms:
        FakeStore.rows = {f"eval-val-{lr}": [_row(t, r) for t, r in zip(episodes, rewards, strict=True)]}
        arms = bench_learning.Arms(KEY)
        arms.land(f"val-grpo-lr{lr}", f"eval-val-{lr}")
        return arms

    land(first, [1.0, 0.0])
    assert bench_learning.chosen_lr(land(second, [1.0, 0.0])) == first  # a tie
    assert bench_learning.chosen_lr(land(second, [1.0, 1.0])) == second
    FakeStore.rows = {"eval-val-sft": [_row(t, 0.0) for t in episodes]}
    arms = bench_learning.Arms(KEY)
    arms.land("val-sft", "eval-val-sft")
    search = bench_learning.recipe_search(arms, episodes)
    assert search["chosen_lr"] == second and search["against_sft_on_val"][second]["gained"] == 2


def test_the_report_is_written_again_from_the_committed_arms_with_the_seeds_mean_gain(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "arms.json")
    monkeypatch.setattr(bench_learning, "PLAN", tmp_path / "plan.json")
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    episodes = [f"acme/{family}-l0-s{seed}" for family in ("x", "y") for seed in (1, 2)]
    bench_learning.PLAN.write_text(json.dumps({"held_out": {"unseen_seeds": episodes}, "val": []}))
    arms = bench_learning.Arms(KEY)
    for name, passing in (("sft", 0), ("grpo-s0", 2), ("grpo-s1", 1)):  # seeds gain 2 and 1 of 4 episodes
        FakeStore.rows = {name: [_row(t, float(i < passing)) for i, t in enumerate(episodes)]}
        arms.land(name, name)
    monkeypatch.setattr(sys, "argv", ["bench_learning.py", "--report"])
    bench_learning.main()
    report = json.loads((tmp_path / "learning.json").read_text())
    assert report["complete"] is False and report["grpo_seeds_measured"] == 2
    gain = report["grpo_mean_gain"]
    assert gain["runs"] == ["grpo-s0", "grpo-s1"] and gain["difference"] == pytest.approx(0.375)
    # Drawing the y family twice gains nothing; x twice with seed 0 twice, everything (1 draw in 16):
    assert gain["difference_95_families_and_seeds_resampled"] == [0.0, 1.0]
    assert report["against_sft"]["grpo-s0"]["gained"] == 2


def test_more_sft_trains_as_many_epochs_as_fit_in_grpos_time_fixed_in_the_plan_once_known(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(bench_learning, "WORK", tmp_path)
    monkeypatch.setattr(bench_learning, "SFT", tmp_path / "sft")
    monkeypatch.setattr(bench_learning, "PLAN", tmp_path / "plan.json")
    (tmp_path / "sft").mkdir()
    steps = [{"step": s, "loss": 1.0, "time_step": 1000.0} for s in (1, 2, 3)]  # one epoch: 3,000 s
    (tmp_path / "sft" / "metrics.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    plan = {"val": []}
    assert bench_learning.more_sft_epochs(plan, grpo_seconds=10_400.0) == 3  # 10,400 / 3,000 rounds to 3
    assert json.loads(bench_learning.PLAN.read_text())["more_sft_epochs"] == 3  # committed with the plan
    # A slower SFT epoch later (another machine, or one timed beside other work) changes nothing:
    steps = [{"step": s, "loss": 1.0, "time_step": 5000.0} for s in (1, 2, 3)]
    (tmp_path / "sft" / "metrics.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    assert bench_learning.more_sft_epochs(plan, grpo_seconds=10_400.0) == 3
    assert bench_learning.more_sft_epochs({}, grpo_seconds=1_000.0) == 1  # never none
    ran = []
    stages = SimpleNamespace(run=lambda name, argv, then=None: ran.append((name, argv, then())))
    assert bench_learning.more_sft(stages, 3) == tmp_path / "more-sft" / "model"
    [(_, argv, epochs)] = ran
    assert "epochs=3" in argv and epochs == {"epochs": 3}
    assert f"model.path={bench_learning.SFT_MODEL}" in argv


def test_the_whole_run_counts_evaluations_and_training_steps_and_estimates_the_time_left(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(bench_learning, "WORK", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "arms.json")
    monkeypatch.setattr(bench_learning, "RESULTS", tmp_path)  # no committed journal
    monkeypatch.setattr(bench_learning, "RFT_DATA", tmp_path / "rft-data")  # not sampled yet
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    plan = {"held_out": {"a": ["t1", "t2"], "b": ["t3"]}, "val": ["v1"], "rft_instances": ["r1", "r2"]}
    held, val = 2 * 3 * len(bench_learning.HELD_OUT_ARMS), 2 * len(bench_learning.VAL_ARMS)
    total = held + val + bench_learning.GRPO_RUNS * bench_learning.ROLLOUTS + 2
    FakeStore.rows = {}
    arms = bench_learning.Arms(KEY)
    assert bench_learning.whole_run(plan, arms) == f"whole run: 0/{total:,} rollouts (0 %)"

    unfinished = _row("t1", 0.0, 3)
    unfinished.finished_at = None
    FakeStore.rows = {"eval-sft": [_row("t1", 1.0, 0), _row("t2", 0.0, 1), unfinished]}  # 31 s busy
    run = tmp_path / "grpo-lr3e-6-s0"
    run.mkdir()
    steps = [{"step": 1, "time_step": 100.0}, {"step": 2, "time_step": 50.0}, {"step": 2, "time_step": 49.0}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))  # step 2 resumed
    done = 2 + 2 * bench_learning.TASKS_PER_STEP * bench_learning.GROUP
    seconds = 31.0 + 149.0
    line = bench_learning.whole_run(plan, arms)
    assert line.startswith(f"whole run: {done}/{total:,} rollouts ({100 * done / total:.0f} %)")
    assert f"about {(total - done) * seconds / done / 3600:.1f} h left" in line
    assert f"at {60 * done / seconds:.1f}/min" in line


def test_a_fresh_checkout_counts_the_landed_arms_in_the_whole_run_and_each_training_run_once(
    tmp_path, monkeypatch
):
    """A fresh machine has no run store or metrics, but the arms' file: its progress is not 0. Where the
    machine kept them too, a landed run counts once."""
    monkeypatch.setattr(bench_learning, "WORK", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "arms.json")
    monkeypatch.setattr(bench_learning, "RESULTS", tmp_path)  # no committed journal
    monkeypatch.setattr(bench_learning, "RFT_DATA", tmp_path / "rft-data")  # not sampled yet
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    plan = {"held_out": {"a": ["t1", "t2"]}, "val": ["v1"], "rft_instances": ["r1"]}
    held, val = 2 * 2 * len(bench_learning.HELD_OUT_ARMS), 2 * len(bench_learning.VAL_ARMS)
    total = held + val + bench_learning.GRPO_RUNS * bench_learning.ROLLOUTS + 1
    arms = bench_learning.Arms(KEY)
    FakeStore.rows = {"eval-sft": [_row("t1", 1.0, 0), _row("t2", 0.0, 1)]}  # 31 s busy
    arms.land("sft", "eval-sft")
    FakeStore.rows = {"eval-grpo-s0": [_row("t1", 1.0, 0), _row("t2", 1.0, 1)]}
    arms.land("grpo-s0", "eval-grpo-s0", lr="3e-6", training_seconds=600.0, per_step=[{"step": 1}] * 5)
    FakeStore.rows = {}  # a fresh machine's empty store
    done = 2 + 2 + 5 * bench_learning.TASKS_PER_STEP * bench_learning.GROUP
    seconds = 31.0 + 31.0 + 600.0
    left = (total - done) * seconds / done + 600.0  # and more SFT, as long as GRPO seed 0 trained
    expected = (
        f"whole run: {done}/{total:,} rollouts ({100 * done / total:.0f} %), about {left / 3600:.1f} h left"
    )
    assert bench_learning.whole_run(plan, arms).startswith(expected)

    kept = bench_learning.grpo_dir("3e-6", 0)  # the same run's metrics, on a machine that kept them
    kept.mkdir()
    (kept / "metrics.jsonl").write_text(json.dumps({"step": 1, "time_step": 100.0}) + "\n")
    assert bench_learning.whole_run(plan, arms).startswith(expected)


def test_the_whole_run_counts_a_committed_journal_before_the_batch_restores_it(tmp_path, monkeypatch):
    """A fresh checkout prints its progress before its batch puts the journal into the store."""
    monkeypatch.setattr(bench_learning, "WORK", tmp_path)
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "arms.json")
    monkeypatch.setattr(bench_learning, "RESULTS", tmp_path)
    monkeypatch.setattr(bench_learning, "RFT_DATA", tmp_path / "rft-data")  # not sampled yet
    monkeypatch.setattr(bench_learning, "Store", FakeStore)
    plan = {"held_out": {"a": ["t1", "t2"]}, "val": ["v1"], "rft_instances": ["r1"]}
    arms = bench_learning.Arms(KEY)
    spans = [("2026-12-04T05:00:00", "2026-12-04T05:01:00"), ("2026-12-04T05:00:30", "2026-12-04T05:02:00")]
    lines = [{"run": {}}] + [
        {"task": "t1", "sample": n, "started_at": a, "finished_at": b} for n, (a, b) in enumerate(spans)
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    bench_learning.journal_of("eval-rft").write_bytes(gzip.compress(text.encode()))
    FakeStore.rows = {}
    assert bench_learning.whole_run(plan, arms).startswith("whole run: 2/")
    assert "at 1.0/min" in bench_learning.whole_run(plan, arms)  # 2 rollouts in 120 s busy

    FakeStore.rows = {"eval-rft": [_row("t1", 1.0, n) for n in range(3)]}  # restored, and one more since
    assert bench_learning.whole_run(plan, arms).startswith("whole run: 3/")


def _fake_egym(tmp_path, ran: list, passing: set[str], stop_at: str | None = None):
    """`subprocess.run` standing in for the egym commands RFT runs: `batch` records a rollout in the real
    run store for each of its instances not done there yet (a full score for those in `passing`, and
    it dies on `stop_at`, as a killed session would); `sft-data` writes the folder `--out` names."""

    def run(command, cwd):
        ran.append(command[1:2])
        if command[1] == "batch":
            tasks, samples = command[2 : command.index("-k")], int(command[command.index("-k") + 1])
            store = Store(command[command.index("--store") + 1])
            run_id, model = command[command.index("--run") + 1], command[command.index("--model") + 1]
            store.create_run(run_id, policy="hf", model=model, tasks=tasks, config={"samples": samples})
            wanted = [(task, sample) for task in tasks for sample in range(samples)]
            for row in store.add_rollouts(run_id, wanted):
                if row.status == "done":
                    continue
                if row.task == stop_at:
                    store.close()
                    return subprocess.CompletedProcess(command, -9)
                ran[-1].append(row.task if samples == 1 else (row.task, row.sample))
                store.claim(row.id, "me")
                full = row.task in passing
                step = Step(index=0, turn=AssistantTurn(content=f"did {row.task}"), policy_seconds=1.0)
                trajectory = Trajectory(task=row.task, policy="hf", stop_reason="answered", steps=[step])
                grade = Grade(
                    task=row.task, earned=int(full), raw_earned=int(full), possible=1, normalized=int(full)
                )
                store.record(row.id, trajectory=trajectory, grade=grade, passed=full, seconds=2.0)
            store.close()
        if command[1] == "sft-data":
            out = tmp_path / command[command.index("--out") + 1]
            out.mkdir(parents=True)
            (out / "data.jsonl").write_text('{"task": "acme/x-l0-s1", "text": "é"}\n')
            (out / "manifest.json").write_text('{"prompt": "compact"}')
        return subprocess.CompletedProcess(command, 0)

    return run


@pytest.fixture
def rft_bench(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_learning, "WORK", tmp_path / "work")
    monkeypatch.setattr(bench_learning, "STORE", tmp_path / "work" / "runs.db")
    monkeypatch.setattr(bench_learning, "RFT_DATA", tmp_path / "results" / "learning-rft-data")
    monkeypatch.setattr(bench_learning, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(bench_learning, "PART_ROLLOUTS", 2)
    monkeypatch.setattr(bench_learning, "ROOT", tmp_path)
    (tmp_path / "work").mkdir()
    (tmp_path / "results").mkdir()


def _fresh_checkout(tmp_path) -> None:
    """What a new session has of a stopped one: the committed results only (.egym is gone)."""
    shutil.rmtree(tmp_path / "work")
    (tmp_path / "work").mkdir()


def test_rfts_sampling_goes_on_in_a_fresh_checkout_from_its_committed_journal(
    rft_bench, tmp_path, monkeypatch
):
    """The sampling outlasts a session: each part's done rollouts land in the committed journal, and a
    fresh checkout restores them (the kept ones with their trajectories) and samples only the rest."""
    from bench import bench_warmstart

    ids = ["acme/x-l0-s1", "acme/x-l0-s2", "acme/x-l0-s3", "acme/x-l0-s4"]
    ran: list = []
    monkeypatch.setattr(
        bench_warmstart.subprocess, "run", _fake_egym(tmp_path, ran, {"acme/x-l0-s1"}, "acme/x-l0-s4")
    )
    with pytest.raises(SystemExit, match="rft-sample-2 failed"):  # killed during the second part
        bench_learning.rft(bench_warmstart.Stages(tmp_path / "work" / "stages.json"), ids, KEY)
    assert ran == [["batch", "acme/x-l0-s1", "acme/x-l0-s2"], ["batch", "acme/x-l0-s3"]]
    first = {row.task: row for row in bench_learning.rows_of("rft-sample") if row.status == "done"}
    lines = gzip.decompress(bench_learning.journal_of("rft-sample").read_bytes()).decode().splitlines()
    # part 1 only: part 2 died before its journal was written
    assert [json.loads(line).get("task") for line in lines] == [None, "acme/x-l0-s1", "acme/x-l0-s2"]
    assert ["trajectory" in json.loads(line) for line in lines[1:]] == [True, False]  # only RFT keeps s1

    _fresh_checkout(tmp_path)
    ran[:] = []
    monkeypatch.setattr(bench_warmstart.subprocess, "run", _fake_egym(tmp_path, ran, {"acme/x-l0-s4"}))
    bench_learning.rft(bench_warmstart.Stages(tmp_path / "work" / "stages.json"), ids, KEY)
    assert ran == [["batch"], ["batch", "acme/x-l0-s3", "acme/x-l0-s4"], ["sft-data"], ["sft"]]
    rows = {row.task: row for row in bench_learning.rows_of("rft-sample")}
    assert {task: row.status for task, row in rows.items()} == dict.fromkeys(ids, "done")
    for task in ("acme/x-l0-s1", "acme/x-l0-s2"):  # as they were sampled: the sampling's time counts them
        was, now = first[task], rows[task]
        assert (now.reward, now.passed, now.started_at, now.finished_at) == (
            was.reward,
            was.passed,
            was.started_at,
            was.finished_at,
        )
    assert rows["acme/x-l0-s1"].trajectory_model().steps[0].turn.content == "did acme/x-l0-s1"
    assert rows["acme/x-l0-s2"].trajectory is None
    whole = json.loads(gzip.decompress(bench_learning.journal_of("rft-sample").read_bytes()).splitlines()[0])
    assert whole == {"run": {"kind": "batch", "policy": "hf", "config": {"samples": 1}}}
    restored_again = bench_learning.restore_run(
        bench_learning.STORE,
        "rft-sample",
        bench_learning.journal_of("rft-sample"),
        model=str(bench_learning.SFT_MODEL),
    )
    assert restored_again == 0  # what the store holds done stays as it is


def test_an_evaluation_goes_on_in_a_fresh_checkout_from_its_committed_journal(
    rft_bench, tmp_path, monkeypatch
):
    """An arm's evaluation (an hour here) can outlast what is left of a session: it runs in parts too, and
    a fresh checkout samples only the episodes its journal lacks, the arm landing with all of them."""
    from bench import bench_warmstart

    episodes = ["acme/x-l0-s11", "acme/y-l0-s12", "acme/z-l0-s0"]  # 2 samples each: one episode a part
    model = tmp_path / "work" / "rft" / "model"
    ran: list = []
    monkeypatch.setattr(
        bench_warmstart.subprocess, "run", _fake_egym(tmp_path, ran, {"acme/y-l0-s12"}, "acme/z-l0-s0")
    )
    stages = bench_warmstart.Stages(tmp_path / "work" / "stages.json")
    with pytest.raises(SystemExit, match="eval-rft-3 failed"):
        bench_learning.evaluate(stages, "rft", model, episodes, seed=0)
    journal = bench_learning.journal_of("eval-rft")
    lines = [json.loads(line) for line in gzip.decompress(journal.read_bytes()).splitlines()]
    assert [(line["task"], line["sample"]) for line in lines[1:]] == [
        (t, s) for t in episodes[:2] for s in (0, 1)
    ]
    assert not any("trajectory" in line for line in lines)  # an evaluation's outcomes, not its turns

    _fresh_checkout(tmp_path)
    ran[:] = []
    monkeypatch.setattr(bench_warmstart.subprocess, "run", _fake_egym(tmp_path, ran, {"acme/z-l0-s0"}))
    stages = bench_warmstart.Stages(tmp_path / "work" / "stages.json")
    assert bench_learning.evaluate(stages, "rft", model, episodes, seed=0) == "eval-rft"
    assert ran == [["batch"], ["batch"], ["batch", ("acme/z-l0-s0", 0), ("acme/z-l0-s0", 1)]]
    monkeypatch.setattr(bench_learning, "ARMS", tmp_path / "results" / "learning-arms.json")
    arms = bench_learning.Arms(KEY)
    arms.land("rft", "eval-rft")
    assert arms.outcomes("rft") == {(t, s): t != "acme/x-l0-s11" for t in episodes for s in (0, 1)}


def test_rfts_data_is_kept_so_a_fresh_checkout_trains_on_it_without_sampling_again(
    rft_bench, tmp_path, monkeypatch
):
    """RFT samples for hours before it trains: its data lands committed with the sampling's time and the
    model it sampled, and a fresh checkout (no .egym) restores the same bytes instead."""
    from bench import bench_warmstart

    plan = {"rft_instances": ["acme/x-l0-s1", "acme/x-l0-s2"]}
    ran: list = []
    monkeypatch.setattr(bench_warmstart.subprocess, "run", _fake_egym(tmp_path, ran, {"acme/x-l0-s1"}))
    ids = plan["rft_instances"]
    model = bench_learning.rft(bench_warmstart.Stages(tmp_path / "work" / "stages.json"), ids, KEY)
    assert [command[0] for command in ran] == ["batch", "sft-data", "sft"]
    assert model == tmp_path / "work" / "rft" / "model"
    kept = json.loads((bench_learning.RFT_DATA / "stage.json").read_text())
    seconds = bench_warmstart.busy_seconds(bench_learning.rows_of("rft-sample"))
    assert kept["sampled_from"] == KEY and kept["examples"] == 1 and kept["sample_seconds"] == seconds
    assert bench_learning.rft_sampling(plan) == (2, seconds)
    made = (tmp_path / "work" / "rft-data" / "data.jsonl").read_bytes()

    _fresh_checkout(tmp_path)
    ran[:] = []
    bench_learning.rft(bench_warmstart.Stages(tmp_path / "work" / "stages.json"), ids, KEY)
    assert ran == [["sft"]]  # trained on the kept data, nothing sampled
    assert (tmp_path / "work" / "rft-data" / "data.jsonl").read_bytes() == made
    assert bench_learning.rows_of("rft-sample") == []
    assert bench_learning.rft_sampling(plan) == (2, seconds)  # from the kept record, not from the store
    with pytest.raises(SystemExit, match="was sampled from"):
        bench_learning.rft(bench_warmstart.Stages(tmp_path / "other.json"), ids, "hf:sft/model@ffffffffffff")


def test_an_arms_pass_at_1_is_reported_over_all_episodes_and_each_part():
    parts = {"unseen_seeds": ["acme/x-l0-s11", "acme/y-l0-s12"], "unseen_families": ["acme/z-l0-s0"]}
    outcomes = {
        ("acme/x-l0-s11", 0): True,
        ("acme/x-l0-s11", 1): False,  # this task: 0.5
        ("acme/y-l0-s12", 0): False,
        ("acme/y-l0-s12", 1): False,  # 0.0
        ("acme/z-l0-s0", 0): True,  # 1.0 (its other sample did not finish)
    }
    assert bench_learning.pass_by_part(outcomes, parts) == {
        "all": 0.5,
        "unseen_seeds": 0.25,
        "unseen_families": 1.0,
    }
    assert bench_learning.pass_by_part(outcomes, {**parts, "none": ["acme/w-l0-s1"]})["none"] is None


@pytest.mark.parametrize(("exported", "capability"), [(None, "AVX2"), ("default", "DEFAULT")])
def test_a_long_benchs_children_compute_on_the_pinned_code_paths(monkeypatch, exported, capability):
    """A model the bench trains again on another CPU must be the same: torch in a child takes the AVX2
    kernels (even on an AVX-512 CPU), unless the user exported a choice of their own."""
    from bench.common import PINNED_NUMERICS, pin_numerics

    for name in PINNED_NUMERICS:  # set, then removed: the monkeypatch restores each as it was before the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    if exported:
        monkeypatch.setenv("ATEN_CPU_CAPABILITY", exported)
    pin_numerics()
    child = "import os, torch; print(torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'], os.environ['ONEDNN_MAX_CPU_ISA'])"
    seen = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, check=True
    ).stdout.split()
    assert seen == [capability, "AVX2", "AVX2"]
