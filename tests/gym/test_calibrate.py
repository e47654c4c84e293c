"""Calibration: Wilson intervals and the documented bands, from given scores and from real runs."""

from __future__ import annotations

import datetime as dt

import pytest
from typer.testing import CliRunner

from gym.batch import BatchRequest
from gym.batch.executors import LocalExecutor
from gym.calibrate import Score, _shown_model, band_for, calibrate_run, calibrate_scores, wilson_interval
from gym.cli import app
from gym.store import Store
from gym.tasks import discover_tasks, load_task
from tests.gym.task_fixture import write_mini_world


@pytest.mark.parametrize(
    ("rate", "band"),
    [
        (0.0, "too-hard"),
        (0.049, "too-hard"),
        (0.05, "hard"),
        (0.125, "hard"),
        (0.199, "hard"),
        (0.2, "target"),
        (0.35, "target"),
        (0.5, "target"),
        (0.501, "too-easy"),
        (1.0, "too-easy"),
    ],
)
def test_band_cut_offs(rate, band):
    assert band_for(rate) == band


def test_wilson_interval_matches_reference_values():
    # Reference: Wilson (1927) / statsmodels proportion_confint(method="wilson").
    assert wilson_interval(2, 8) == pytest.approx((0.0715, 0.5907), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_scores_to_band_with_threshold_and_incomplete_grades():
    scores = [Score(1.0), Score(0.85), Score(0.79), Score(0.1), Score(0.0), Score(0.9, incomplete=True)] + [
        Score(0.0)
    ] * 4
    cal = calibrate_scores("w/t", scores, threshold=0.8)
    assert (cal.samples, cal.excluded, cal.passes) == (9, 1, 2)
    assert cal.pass_rate == pytest.approx(2 / 9) and cal.band == "target"
    assert cal.mean == pytest.approx((1.0 + 0.85 + 0.79 + 0.1) / 9)
    with_incomplete = calibrate_scores("w/t", scores, threshold=0.8, include_incomplete=True)
    assert (with_incomplete.samples, with_incomplete.passes) == (10, 3)
    assert not cal.confident  # 9 samples cannot pin a 20-50% band


def test_confident_only_when_the_interval_sits_inside_the_band():
    assert calibrate_scores("w/t", [Score(1.0)] * 40, threshold=0.8).confident
    assert not calibrate_scores("w/t", [Score(1.0)] * 3, threshold=0.8).confident
    assert calibrate_scores("w/t", [], threshold=0.8).band is None


@pytest.mark.docker
async def test_two_policies_bands_are_written_side_by_side(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path, {"ship": {}})
    store = Store(str(tmp_path / "runs.db"))
    for policy in ("oracle", "null"):  # real rollouts: the oracle solves the task, null never does
        req = BatchRequest(
            tasks=discover_tasks(tasks_dir), policy=policy, samples=8, concurrency=4, kind="calibrate"
        )
        (cal,) = await calibrate_run(store, req, LocalExecutor())
        assert cal.model == policy
    task = load_task(tasks_dir / "ship")
    assert {key: b.band for key, b in task.bands.items()} == {"oracle": "too-easy", "null": "too-hard"}
    evidence = task.bands["null"].calibration
    assert (evidence.samples, evidence.pass_rate, evidence.policy) == (8, 0.0, "null")
    assert evidence.date == dt.date.today() and task.bands["oracle"].calibration.pass_rate == 1.0
    assert task.prompt and task.title  # the rest of task.yaml is as it was


def test_an_old_single_band_reads_as_model_unknown_and_is_kept_beside_a_new_one(tmp_path):
    tasks_dir = write_mini_world(tmp_path, {"ship": {}})
    path = tasks_dir / "ship" / "task.yaml"
    path.write_text(
        path.read_text()
        + "band: hard\ncalibration: {pass_rate: 0.1, interval: [0.02, 0.4], samples: 10, policy: hf smollm2}\n"
    )
    task = load_task(tasks_dir / "ship")
    assert task.bands["unknown"].band == "hard" and task.bands["unknown"].calibration.samples == 10
    from gym.tasks import BandEvidence, save_band

    save_band(task, "oracle", "too-easy", BandEvidence(pass_rate=1.0, interval=(0.7, 1.0), samples=8))
    text = path.read_text()
    assert "\nband:" not in text and "\ncalibration:" not in text
    again = load_task(tasks_dir / "ship")
    assert {key: b.band for key, b in again.bands.items()} == {"unknown": "hard", "oracle": "too-easy"}


@pytest.mark.docker
async def test_real_runs_with_known_success_rates_get_their_bands(tmp_path, docker_image):
    # pass-N: the oracle acts in the first N of 8 samples, the null policy in the rest.
    tasks = discover_tasks(write_mini_world(tmp_path, {f"pass-{n}": {} for n in (8, 2, 1, 0)}))
    store = Store(str(tmp_path / "runs.db"))
    req = BatchRequest(tasks=tasks, policy="known-rate", samples=8, concurrency=4, kind="calibrate")
    results = await calibrate_run(store, req, LocalExecutor("tests.gym.batch_fakes:known_rate_rollout"))
    got = {c.task: (c.passes, c.samples, c.band) for c in results}
    assert got == {
        "mini/pass-8": (8, 8, "too-easy"),
        "mini/pass-2": (2, 8, "target"),
        "mini/pass-1": (1, 8, "hard"),
        "mini/pass-0": (0, 8, "too-hard"),
    }
    written = {t.key: t for t in discover_tasks(tmp_path / "tasks")}  # written back to task.yaml
    assert {k: t.bands["known-rate"].band for k, t in written.items()} == {k: v[2] for k, v in got.items()}
    evidence = written["mini/pass-2"].bands["known-rate"].calibration  # with its interval and date
    assert (evidence.samples, evidence.pass_rate, evidence.policy) == (8, 0.25, "known-rate")
    assert evidence.date is not None
    assert evidence.interval == pytest.approx((0.071, 0.591), abs=1e-3)
    assert store.run_stats(store.list_runs(kind="calibrate")[0].id)["done"] == 32


@pytest.mark.docker
def test_calibrate_cli_dry_run_prints_the_table_and_writes_nothing(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path, {"pass-1": {}})
    args = [
        "calibrate",
        str(tasks_dir),
        "--policy",
        "known-rate",
        "--samples",
        "2",
        "--dry-run",
        "--store",
        str(tmp_path / "runs.db"),
        "--rollout-fn",
        "tests.gym.batch_fakes:known_rate_rollout",
    ]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "mini/pass-1" in result.output and "1/2 (50%)" in result.output and "target" in result.output
    assert "bands:" not in (tasks_dir / "pass-1" / "task.yaml").read_text()


@pytest.mark.docker
def test_calibrate_refuses_to_write_a_band_from_too_few_samples(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path, {"pass-0": {}})
    args = [
        "calibrate",
        str(tasks_dir),
        "--policy",
        "known-rate",
        "--samples",
        "4",
        "--store",
        str(tmp_path / "runs.db"),
        "--rollout-fn",
        "tests.gym.batch_fakes:known_rate_rollout",
    ]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "too-hard (not written: 4 < 8 samples)" in result.output
    assert "bands:" not in (tasks_dir / "pass-0" / "task.yaml").read_text()


@pytest.mark.docker
async def test_rounds_stop_where_the_band_is_settled_and_go_on_up_to_the_cap_elsewhere(
    tmp_path, docker_image
):
    """--max-samples: 8/8 passes settles too-easy after one round; 0/8 (interval up to 32%) gets rounds
    of 8 more until the cap, in the same run."""
    tasks = discover_tasks(write_mini_world(tmp_path, {"pass-99": {}, "pass-0": {}}))
    store = Store(str(tmp_path / "runs.db"))
    req = BatchRequest(tasks=tasks, policy="known-rate", samples=8, concurrency=4, kind="calibrate")
    executor = LocalExecutor("tests.gym.batch_fakes:known_rate_rollout")
    results = await calibrate_run(store, req, executor, max_samples=24)
    got = {c.task: (c.passes, c.samples, c.band, c.confident) for c in results}
    assert got == {"mini/pass-99": (8, 8, "too-easy", True), "mini/pass-0": (0, 24, "too-hard", False)}
    (run,) = store.list_runs(kind="calibrate")
    assert store.run_stats(run.id)["done"] == 32


def test_a_local_model_is_named_relative_to_the_working_directory(tmp_path, monkeypatch):
    """A shipped bands file must not carry this machine's paths; hub names and outside folders stay."""
    model = tmp_path / "runs" / "sft" / "model"
    model.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert _shown_model(str(model)) == "runs/sft/model"
    assert _shown_model("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    monkeypatch.chdir(model)  # the model folder is not under the working directory
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert _shown_model(str(elsewhere)) == str(elsewhere)
