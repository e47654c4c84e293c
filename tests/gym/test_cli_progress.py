"""Progress on long commands: a redrawn bar on a terminal; in a log (nohup, CI) a line every 30 s with
done/total and an ETA; `egym train` with the ETA of the whole run."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from typer.testing import CliRunner

from gym.batch.progress import LOG_EVERY_S, LogProgress, eta, make_progress
from gym.cli import app
from gym.cli.training import RunEta
from tests.gym.batch_fakes import write_stub_tasks
from tests.gym.task_fixture import write_mini_world

runner = CliRunner()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def log_progress(clock: Clock) -> tuple[LogProgress, io.StringIO]:
    out = io.StringIO()
    progress = LogProgress(
        TextColumn("validate"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs · {task.fields[tasks]}"),
        *eta(),
        console=Console(file=out, width=30),
        get_time=clock,
    )
    return progress, out


def test_not_a_terminal_gets_log_lines_and_a_terminal_gets_the_bar():
    assert isinstance(make_progress(TextColumn("x"), console=Console(file=io.StringIO())), LogProgress)
    terminal = make_progress(TextColumn("x"), console=Console(file=io.StringIO(), force_terminal=True))
    assert type(terminal) is Progress


def test_a_log_gets_a_line_at_the_start_every_30_s_and_at_the_end():
    clock = Clock()
    progress, out = log_progress(clock)
    with progress:
        bar = progress.add_task("validate", total=10, tasks="0/2 tasks")
        for done in range(1, 11):
            clock.now += 12  # a run every 12 s: a line every third run (30 s)
            progress.advance(bar)
            if done == 5:
                progress.update(bar, tasks="1/2 tasks")
        progress.update(bar, tasks="2/2 tasks")
    lines = out.getvalue().splitlines()
    assert [re.search(r"(\d+)/10", line)[1] for line in lines] == ["0", "3", "6", "9", "10"]
    assert lines[1] == "validate  3/10 runs · 0/2 tasks ETA 0:01:24"  # one line, however narrow the console
    assert lines[-1].startswith("validate 10/10 runs · 2/2 tasks")  # the last state, when it stops
    assert all("━" not in line for line in lines)  # no bar


def test_a_transient_display_leaves_no_last_line():
    out = io.StringIO()
    progress = LogProgress(MofNCompleteColumn(), console=Console(file=out), transient=True, get_time=Clock())
    with progress:
        bar = progress.add_task("phase", total=3)
        progress.advance(bar)
    assert out.getvalue().split() == ["0/3"]


def test_nothing_changed_means_no_line_and_nothing_new_at_the_end():
    clock = Clock()
    progress, out = log_progress(clock)
    with progress:
        bar = progress.add_task("validate", total=4, tasks="-")
        clock.now += LOG_EVERY_S - 1
        progress.advance(bar)  # not due yet
        clock.now += 1
        progress.advance(bar)  # due
    assert len(out.getvalue().splitlines()) == 2  # start, the due line; nothing changed after it


def test_the_run_eta_counts_only_steps_run_here():
    clock = Clock()
    eta_ = RunEta(10, clock)
    clock.now = 4.0
    assert eta_.after(1) == "9 of 10 steps left, run ETA 0:00:36"
    clock.now = 8.0
    assert eta_.after(2) == "8 of 10 steps left, run ETA 0:00:32"
    resumed = RunEta(10, clock)  # resumed at step 6: 5 steps done earlier, elsewhere
    clock.now = 8.0 + 60
    assert resumed.after(6) == "4 of 10 steps left, run ETA 0:04:00"


def test_train_prints_each_step_with_the_eta_of_the_run(tmp_path):
    args = ["train", "trainer/configs/toy.yaml", "steps=2", f"output_dir={tmp_path}", "rollout.group_size=4"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    steps = [line for line in result.output.splitlines() if "run ETA" in line]
    assert [line.rsplit("  ", 1)[1].split(", run ETA")[0] for line in steps] == [
        "1 of 2 steps left",
        "0 of 2 steps left",
    ]
    assert steps[-1].endswith("run ETA 0:00:00") and result.output.splitlines()[-1].startswith(
        "done: 2 steps"
    )


@pytest.mark.docker  # the batch reaps orphan containers before it starts
def test_batch_in_a_log_prints_progress_lines_to_stderr_and_json_to_stdout(tmp_path):
    tasks = write_stub_tasks(tmp_path / "tasks", ["alpha", "beta"])
    args = ["batch", str(tasks), "-p", "fake", "-k", "4", "-c", "2", "--json"]
    args += ["--store", str(tmp_path / "runs.db"), "--rollout-fn", "tests.gym.batch_fakes:flaky_rollout"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1  # odd samples fail
    summary = json.loads(result.stdout)
    assert (summary["ran"], summary["failed"], summary["skipped"]) == (8, 4, 0)
    assert [(s["task"], s["rollouts"], s["failed"], s["mean"]) for s in summary["scores"]] == [
        ("demo/alpha", 4, 2, 1.0),
        ("demo/beta", 4, 2, 1.0),
    ]
    progress = [line for line in result.stderr.splitlines() if summary["run"] in line]
    assert re.search(r" 0/8 0 done 0 failed 0 running .* ETA -:--:--$", progress[0])
    assert re.search(r" 8/8 4 done 4 failed 0 running .* ETA 0:00:00$", progress[-1])
    assert sum("failed demo/" in line for line in result.stderr.splitlines()) == 4  # one line per failure


@pytest.mark.docker
def test_validate_in_a_log_prints_progress_to_stderr_and_json_to_stdout(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path, {"planted": {"hole": True}})
    result = runner.invoke(app, ["validate", str(tasks_dir), "--no-cheats", "-H", "mcp_servers={}", "--json"])
    assert result.exit_code == 1
    (report,) = json.loads(result.stdout)
    assert report["task"] == "mini/planted" and not report["ok"] and report["holes"]
    assert report["oracle"]["earned"] == report["oracle"]["possible"] > 0
    assert any(p.startswith("rubric hole") for p in report["problems"])
    first = next(line for line in result.stderr.splitlines() if line.startswith("validate"))
    assert first == "validate 0/3 runs · 0/1 tasks 0:00:00 ETA -:--:--"  # untouched state, oracle, null
