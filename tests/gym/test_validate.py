"""`egym validate` on planted flaws: a hole, an impossible item, a claim-only item, a leaked solution."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from core.owner import owner_label
from gym.cli import app
from gym.sandbox.docker_client import client
from gym.tasks import discover_tasks
from gym.validate import ValidateOptions, validate_tasks
from tests.gym.task_fixture import write_mini_world

pytestmark = pytest.mark.docker
NO_MCP = {"mcp_servers": {}}  # these tasks only need bash and files; MCP servers have their own tests
TASKS = {
    "sound": {},
    "planted": {"hole": True, "impossible": True},
    "cheatable": {"weak": True, "leak": True},
    "excused": {"excused": True},
    "fires": {"fires": True},
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory, docker_image):
    root = tmp_path_factory.mktemp("validate")
    tasks = discover_tasks(write_mini_world(root, TASKS))
    out = asyncio.run(validate_tasks(tasks, ValidateOptions(concurrency=4, harness=NO_MCP)))
    return {r.task.removeprefix("mini/"): r for r in out}


def test_a_sound_task_passes(reports):
    r = reports["sound"]
    assert r.ok, r.problems
    assert (str(r.oracle), str(r.null)) == ("8/8", "0/8")
    assert set(r.cheats) == {
        "cheat-peek",
        "cheat-fake-files",
        "cheat-edit-history",
        "cheat-claim",
        "cheat-tamper",
        "cheat-destroy",
        "cheat-number-spray",
        "cheat-name-spray",
        "cheat-claim-done",
        "attack-spray",
        "attack-dump",
    }
    assert all(s.normalized == 0 for s in r.cheats.values())
    destroy = r.cheats["cheat-destroy"]
    assert (
        destroy.raw < r.null.raw == 0
    )  # charged below doing nothing, by its penalties and the damage section
    damage = {i.id: i for i in destroy.items if i.section == "damage"}
    assert damage["damage.rows"].status == "fail" and "orders: 3 changed" in damage["damage.rows"].evidence
    assert damage["damage.files"].status == "pass"  # the mini world has no files to wipe
    assert all(i.status == "pass" for i in r.oracle.items if i.section == "damage")


def test_a_penalty_that_fires_on_the_untouched_state_is_named(reports):
    r = reports["fires"]
    assert any(
        p.startswith("fires on the untouched initial state") and "nothing-shipped" in p for p in r.problems
    ), r.problems
    assert str(r.null) == "0/8 (raw -2)"


def test_planted_hole_and_impossible_item_are_named(reports):
    r = reports["planted"]
    assert not r.ok
    assert r.holes == ["orders-table-exists"]
    assert any(p.startswith("rubric hole") and "orders-table-exists" in p for p in r.problems)
    assert any(p.startswith("oracle scored 10/12") and "order-99-shipped" in p for p in r.problems)


def test_cheats_that_beat_null_are_reported(reports):
    r = reports["cheatable"]
    cheaters = {p.split()[0] for p in r.problems}
    assert {"cheat-claim", "cheat-peek"} <= cheaters, r.problems
    assert str(r.cheats["cheat-peek"]) == "10/10"  # it found the solution in /workspace and replayed it
    assert "answer-mentions-order" in r.cheats["cheat-claim"].passing()
    assert r.cheats["cheat-fake-files"].normalized == 0


def test_baseline_ok_item_is_excused(reports):
    r = reports["excused"]
    assert r.holes == [] and r.excused == ["orders-table-exists"]
    assert not any("rubric hole" in p for p in r.problems)


def test_cli_exits_nonzero_on_a_flawed_task_and_leaves_no_containers(tmp_path, docker_image):
    tasks_dir = write_mini_world(tmp_path, {"planted": {"hole": True, "impossible": True}})
    result = CliRunner().invoke(app, ["validate", str(tasks_dir), "--no-cheats", "-H", "mcp_servers={}"])
    assert result.exit_code == 1, result.output
    assert "rubric hole" in result.output and "0/1 task(s) valid" in result.output
    mine = {"label": [f"egym.owner={owner_label()}"]}  # containers this process started
    assert client().containers.list(all=True, filters=mine, ignore_removed=True) == []
