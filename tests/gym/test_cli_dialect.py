"""One CLI dialect: a flag means one thing everywhere, shared options agree, choices are listed and
enforced, `--version`, `--json` parsed back, plain text (no box drawing) when stdout is not a terminal."""

from __future__ import annotations

import json
import logging
import typing
from importlib.metadata import version

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from gym.cli import app
from gym.cli.options import Chat
from gym.rollout import RolloutSpec
from gym.store import Store
from tests.gym.batch_fakes import fake_grade, fake_trajectory, write_stub_tasks

runner = CliRunner()
BOX = set("│┃─━┏┓┗┛┡┩╇╈┼╭╮╰╯")  # rich's box characters


def commands() -> dict[str, typing.Any]:
    """Every command by its full name ("batch", "tasks list"), as click sees it."""

    def walk(group: typing.Any, prefix: str) -> typing.Iterator[tuple[str, typing.Any]]:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from walk(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}", command

    return dict(walk(get_command(app), ""))


def options_named(long: str) -> dict[str, typing.Any]:
    """The option `long` in each command that has it."""
    found = {}
    for name, command in commands().items():
        for param in command.params:
            if long in param.opts:
                found[name] = param
    return found


def test_a_short_flag_means_one_option_in_every_command():
    meanings: dict[str, set[str]] = {}
    for command in commands().values():
        for param in command.params:
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if not o.startswith("--")):
                meanings.setdefault(short, set()).update(longs)
    assert {short: longs for short, longs in meanings.items() if len(longs) > 1} == {}
    assert meanings["-o"] == {"--option"} and meanings["-c"] == {"--concurrency"}
    assert "-o" not in options_named("--out")["export"].opts


@pytest.mark.parametrize(
    "long",
    ["--store", "--concurrency", "--seeds", "--levels", "--split", "--option", "--chat", "--host", "--json"],
)
def test_a_shared_option_has_one_help_text_and_one_default(long):
    found = options_named(long)
    assert len(found) >= 2, f"{long} is in {list(found)} only"
    assert len({(p.help, repr(p.default)) for p in found.values()}) == 1, {
        name: (p.help, p.default) for name, p in found.items()
    }
    assert all(p.help for p in found.values())


def test_samples_differ_between_batch_and_calibrate_and_the_help_says_why():
    found = options_named("--samples")
    assert (found["batch"].default, found["calibrate"].default) == (1, 8)
    assert "not batch's 1" in found["calibrate"].help


@pytest.mark.parametrize("args", [["batch", "-p", "null"], ["calibrate", "-p", "null"], ["validate"]])
def test_concurrency_is_checked_the_same_way_in_each_command(args):
    result = runner.invoke(app, [*args, "tasks/acme", "-c", "0"])
    assert result.exit_code == 2
    assert (
        "Invalid value for '--concurrency' / '-c': Input should be greater than or equal to 1"
        in result.output
    )


def test_o_is_a_policy_option_not_an_output_path():
    result = runner.invoke(app, ["export", "some-run", "-o", "out.jsonl"])
    assert result.exit_code == 2 and "No such option: -o" in result.output


@pytest.mark.parametrize(
    ("args", "flag", "choices"),
    [
        (["batch", "x", "-p", "null", "--split", "dev"], "--split", "'train', 'val', 'test'"),
        (["validate", "x", "--chat", "slack"], "--chat", "'compat', 'real'"),
        (["export", "run", "-f", "csv"], "--format", "'parquet', 'jsonl', 'harbor'"),
        (["serve-env", "x", "--protocol", "gym"], "--protocol", "'ors', 'nemo-gym', 'openenv'"),
        (["tasks", "sample", "acme/x", "--split", "dev"], "--split", "'train', 'val', 'test'"),
        (["--log-level", "loud", "runs"], "--log-level", "'debug', 'info', 'warning', 'error'"),
    ],
)
def test_a_value_outside_the_choices_is_refused_in_one_line(args, flag, choices):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert flag in line and f"is not one of {choices}" in line


@pytest.mark.parametrize(
    ("command", "listed"),
    [("batch", "<train|val|test>"), ("validate", "<compat|real>"), ("export", "<parquet|jsonl|harbor>")],
)
def test_help_lists_the_choices(command, listed):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and listed in result.output


def test_an_unknown_executor_is_refused_before_any_task_is_read():
    result = runner.invoke(app, ["batch", "no/such-task", "-p", "null", "--executor", "rey"])
    assert result.exit_code == 2
    assert "unknown executor 'rey'; did you mean 'ray'?" in result.output


def test_the_choice_lists_match_what_they_select():
    from gym.cli.serve_cmds import PROTOCOLS, ProtocolName
    from gym.sandbox.docker_client import CHAT_IMAGES

    assert typing.get_args(Chat) == tuple(CHAT_IMAGES)
    assert typing.get_args(ProtocolName) == tuple(PROTOCOLS)


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"egym {version('enterprise-gym')}\n"


def test_log_level_sets_the_root_logger(tmp_path):
    root = logging.getLogger()
    before = root.level
    try:
        result = runner.invoke(app, ["--log-level", "debug", "runs", "--store", str(tmp_path / "runs.db")])
        assert result.exit_code == 0 and root.level == logging.DEBUG
    finally:
        root.setLevel(before)


@pytest.fixture
def store(tmp_path):
    """A real SQLite store with one finished run of two rollouts (scores 1 and 0.25) and one empty run."""
    s = Store(str(tmp_path / "runs.db"))
    s.create_run("sweep-with-a-long-name", policy="oracle", tasks=["demo/alpha"], samples=2)
    for row, score in zip(
        s.add_rollouts("sweep-with-a-long-name", [("demo/alpha", 0), ("demo/alpha", 1)]),
        (1.0, 0.25),
        strict=True,
    ):
        spec = RolloutSpec(
            run_id=row.run_id, rollout_id=row.id, task=row.task, task_path=".", policy="oracle"
        )
        s.claim(row.id, "pytest")
        s.record(
            row.id,
            trajectory=fake_trajectory(spec, "done"),
            grade=fake_grade(row.task, score),
            passed=score == 1,
        )
    s.finish_run("sweep-with-a-long-name", "done")
    s.create_run("empty", policy="null", tasks=["demo/alpha"])
    yield s
    s.close()


def test_runs_on_an_empty_store_prints_one_line(tmp_path):
    result = runner.invoke(app, ["runs", "--store", str(tmp_path / "runs.db")])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1 and "no runs" in result.stdout
    as_json = runner.invoke(app, ["runs", "--store", str(tmp_path / "runs.db"), "--json"])
    assert json.loads(as_json.stdout) == []


def test_runs_json_lists_runs_then_one_run_then_a_comparison(store):
    listed = json.loads(runner.invoke(app, ["runs", "--store", store.url, "--json"]).stdout)
    by_id = {run["run"]: run for run in listed}
    assert set(by_id) == {"sweep-with-a-long-name", "empty"}
    sweep = by_id["sweep-with-a-long-name"]
    assert (sweep["rollouts"], sweep["done"], sweep["mean"], sweep["pass_rate"]) == (2, 2, 0.625, 0.5)
    assert sweep["created"][:4].isdigit() and sweep["status"] == "done"

    one = json.loads(
        runner.invoke(app, ["runs", "sweep-with-a-long-name", "--store", store.url, "--json"]).stdout
    )
    assert [(s["task"], s["rollouts"], s["mean"]) for s in one["scores"]] == [("demo/alpha", 2, 0.625)]
    assert sorted(r["reward"] for r in one["rollouts"]) == [0.25, 1.0]

    both = runner.invoke(app, ["runs", "sweep-with-a-long-name", "empty", "--store", store.url, "--json"])
    compared = json.loads(both.stdout)
    assert [r["run"] for r in compared["runs"]] == ["sweep-with-a-long-name", "empty"]
    (task,) = compared["tasks"]
    assert task["scores"]["empty"] is None and task["scores"]["sweep-with-a-long-name"]["pass_rate"] == 0.5


def test_runs_piped_is_plain_text_with_whole_rows(store):
    result = runner.invoke(app, ["runs", "--store", store.url])  # CliRunner's stdout is no terminal
    assert result.exit_code == 0
    assert not BOX & set(result.stdout), result.stdout
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("run "))
    columns = [
        "run",
        "kind",
        "created",
        "policy",
        "model",
        "tasks",
        "rollouts",
        "done",
        "failed",
        "mean",
        "pass",
    ]
    assert header.split() == [*columns, "status"]
    row = next(line for line in lines if line.startswith("sweep-with-a-long-name"))
    assert row.split()[-3:] == ["0.625", "50%", "done"]


def test_tasks_list_json_and_plain(tmp_path, monkeypatch):
    write_stub_tasks(tmp_path / "tasks", ["alpha", "beta"])
    monkeypatch.chdir(tmp_path)
    entries = json.loads(runner.invoke(app, ["tasks", "list", "--json", "demo"]).stdout)
    assert [(e["world"], e["name"], e["kind"]) for e in entries] == [
        ("demo", "alpha", "task"),
        ("demo", "beta", "task"),
    ]
    plain = runner.invoke(app, ["tasks", "list", "demo"])
    assert plain.exit_code == 0 and not BOX & set(plain.stdout)
    assert any(line.split()[:2] == ["demo", "alpha"] for line in plain.stdout.splitlines())


def test_tasks_list_without_tasks_says_so_and_fails(tmp_path, monkeypatch):
    (tmp_path / "tasks" / "empty").mkdir(parents=True)
    (tmp_path / "tasks" / "empty" / "world.yaml").write_text("name: empty\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["tasks", "list", "empty"])
    assert (
        result.exit_code == 2
        and "no tasks here: no family or hand-written task in world empty" in result.output
    )
