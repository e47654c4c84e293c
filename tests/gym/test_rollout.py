"""`egym rollout`, `egym runs`, `egym show`: one real episode, stored, listed and printed; how a claimed
rollout's outcome is saved."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gym.cli import app
from gym.rollout import RolloutSpec, run_and_save, run_rollout
from gym.store import Store
from gym.tasks import discover_tasks
from tests.gym.batch_fakes import flaky_rollout
from tests.gym.task_fixture import write_mini_world

WIDE = {"COLUMNS": "200"}


@pytest.mark.docker
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


@pytest.mark.docker
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


@pytest.mark.docker
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


async def test_a_claimed_rollout_is_saved_from_its_outcome_and_a_raising_one_as_failed(tmp_path):
    store = Store(str(tmp_path / "runs.db"))
    store.create_run("r", policy="fake", tasks=["w/t"], samples=3)
    rows = store.add_rollouts("r", [("w/t", s) for s in range(3)])
    specs = [
        RolloutSpec(
            run_id="r", rollout_id=row.id, task="w/t", task_path=".", sample=row.sample, policy="fake"
        )
        for row in rows
    ]

    async def lost_worker(spec: RolloutSpec):
        raise RuntimeError("worker died")

    assert all(store.claim(row.id, "me") for row in rows)
    graded = await run_and_save(store, rows[0].id, specs[0], flaky_rollout)  # even samples pass
    broken = await run_and_save(store, rows[1].id, specs[1], flaky_rollout)  # odd ones fail to start
    lost = await run_and_save(store, rows[2].id, specs[2], lost_worker)
    saved = {row.sample: row for row in store.list_rollouts("r", with_items=True)}
    assert saved[0].status == "done" and str(saved[0].grade_model()) == str(graded.grade) and saved[0].passed
    assert (
        saved[1].status == "failed"
        and saved[1].error == broken.error == "SandboxError: injected start failure"
    )
    assert saved[2].status == "failed" and saved[2].error == lost.error
    assert lost.error.startswith("RuntimeError: worker died (at ") and lost.sample == 2
    store.close()
