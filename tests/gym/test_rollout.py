"""`egym rollout`, `egym runs`, `egym show`: one real episode, stored, listed and printed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gym.cli import app
from gym.rollout import RolloutSpec, run_rollout
from gym.store import Store
from gym.tasks import discover_tasks
from tests.gym.task_fixture import write_mini_world

pytestmark = pytest.mark.docker
WIDE = {"COLUMNS": "200"}


def test_rollout_prints_turns_and_rubric_then_runs_and_show_find_it(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path)
    db = str(tmp_path / "runs.db")
    cli = CliRunner()
    result = cli.invoke(
        app,
        [
            "rollout",
            str(tasks_dir / "ship-order"),
            "--policy",
            "oracle",
            "--store",
            db,
            "-H",
            "mcp_servers={}",
        ],
        env=WIDE,
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "turn 1" in out and "UPDATE orders SET status" in out and "UPDATE 1" in out  # live turns
    assert "score 8/8" in out and "order-2-shipped" in out and "note-written" in out  # rubric breakdown

    (row,) = Store(db).list_rollouts()
    listed = cli.invoke(app, ["runs", "--store", db], env=WIDE)
    assert listed.exit_code == 0 and row.run_id in listed.output and "oracle" in listed.output
    detail = cli.invoke(app, ["runs", row.run_id, "--store", db], env=WIDE)
    assert row.id in detail.output and "8/8" in detail.output
    shown = cli.invoke(app, ["show", row.id[:6], "--store", db], env=WIDE)
    assert shown.exit_code == 0
    assert "final answer" in shown.output and "Order 2 is marked as shipped" in shown.output
    failed_only = cli.invoke(app, ["show", row.id, "--failed", "--no-turns", "--store", db], env=WIDE)
    assert "order-2-shipped" not in failed_only.output


def test_a_broken_episode_is_stored_as_failed_with_its_error(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path)
    db = str(tmp_path / "runs.db")
    unknown = CliRunner().invoke(
        app, ["rollout", str(tasks_dir / "ship-order"), "--policy", "no-such-policy", "--store", db], env=WIDE
    )
    assert unknown.exit_code == 2 and "unknown policy 'no-such-policy'" in unknown.output
    assert Store(db).list_rollouts() == []  # refused before anything ran
    (tasks_dir / "ship-order" / "solution" / "actions.yaml").unlink()
    result = CliRunner().invoke(
        app, ["rollout", str(tasks_dir / "ship-order"), "--policy", "oracle", "--store", db], env=WIDE
    )
    assert result.exit_code == 1
    (row,) = Store(db).list_rollouts()
    assert row.status == "failed" and "TaskError" in row.error and "reference solution not found" in row.error


async def test_on_step_reports_each_turn_with_its_results(tmp_path, docker_image):
    (task,) = discover_tasks(write_mini_world(tmp_path))
    seen = []
    spec = RolloutSpec(
        run_id="pytest",
        rollout_id="watch",
        task=task.key,
        task_path=str(task.path),
        policy="oracle",
        harness={"mcp_servers": {}},
    )
    outcome = await run_rollout(spec, on_step=seen.append)
    assert [s.index for s in seen] == [0, 1, 2]
    assert seen[0].results[0].output.strip() == "UPDATE 1"
    assert seen[2].turn.content.startswith("Order 2 is marked")
    assert outcome.passed and str(outcome.grade) == "8/8"
    # The grade carries a final-state summary for people (the dashboard shows it).
    diff = outcome.grade.meta["state_diff"].splitlines()
    assert "~ orders: 1 changed" in diff and "+ shipping.txt (22 B)" in diff
