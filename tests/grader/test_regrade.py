"""`egym grade ROLLOUT`: a stored rollout re-graded with an edited rubric, its state rebuilt by replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gym.cli import app

WORLD = """name: gt
company: GT Ltd
date: 2025-01-01
agent: {name: Ann, title: Clerk, email: ann@gt.example, chat_username: ann}
initial_state: {sql: [data.sql]}
"""
SEED = "CREATE TABLE notes (id serial PRIMARY KEY, body text);\nGRANT ALL ON notes, notes_id_seq TO agent;\n"
TASK = "id: t1\ntitle: Note\nworld: gt\nprompt: Add a note saying hello.\napps: []\nlimits: {max_turns: 5}\n"
SOLUTION = """- tool: bash
  args: {command: "psql -c \\"INSERT INTO notes(body) VALUES ('hello'), ('extra')\\""}
- answer: Added the note.
"""


def _item(id_: str, query: str, points: int = 2) -> dict:
    return {
        "id": id_,
        "description": id_,
        "points": points,
        "kind": "python",
        "check": "sql.row_exists",
        "args": {"query": query},
    }


@pytest.fixture
def repo(tmp_path) -> Path:
    world = tmp_path / "tasks" / "gt"
    (world / "t1" / "solution").mkdir(parents=True)
    (world / "world.yaml").write_text(WORLD)
    (world / "data.sql").write_text(SEED)
    (world / "t1" / "task.yaml").write_text(TASK)
    (world / "t1" / "solution" / "actions.yaml").write_text(SOLUTION)
    rubric = tmp_path / "rubrics" / "gt" / "t1.json"
    rubric.parent.mkdir(parents=True)
    rubric.write_text(
        json.dumps(
            {
                "task": "gt/t1",
                "damage": {"allow": [{"table": "notes", "may": ["add"]}]},
                "items": [_item("hello", "SELECT 1 FROM notes WHERE body = 'hello'")],
            }
        )
    )
    return tmp_path


def _stored_oracle_rollout(repo: Path, store_url: str) -> str:
    """Run the oracle for real (sandbox, harness, grader) and record it in a store, as a batch would."""
    from gym.episode import open_episode
    from gym.policies.oracle import OraclePolicy
    from gym.store import Store
    from gym.tasks import load_task

    task = load_task(repo / "tasks" / "gt" / "t1")

    async def oracle_episode():
        async with open_episode(task, run_id="pytest-regrade") as episode:
            trajectory = await episode.play(OraclePolicy(task))
            return trajectory, await episode.grade(trajectory)

    trajectory, grade = asyncio.run(oracle_episode())
    assert str(grade) == "2/2", grade.summary()
    store = Store(store_url)
    run = store.create_run(policy="oracle", tasks=[task.key])
    (row,) = store.add_rollouts(run.id, [(task.key, 0)])
    store.record(row.id, trajectory=trajectory, grade=grade, passed=True)
    return row.id


@pytest.mark.docker
def test_egym_grade_replays_and_regrades_with_the_edited_rubric(repo, docker_image, monkeypatch):
    store_url = str(repo / "runs.db")
    rollout = _stored_oracle_rollout(repo, store_url)
    # The author tightens the rubric: the stray 'extra' note is now a penalty, plus a new item.
    (repo / "rubrics" / "gt" / "t1.json").write_text(
        json.dumps(
            {
                "task": "gt/t1",
                "damage": {"allow": [{"table": "notes", "may": ["add"]}]},
                "items": [
                    _item("hello", "SELECT 1 FROM notes WHERE body = 'hello'"),
                    {
                        **_item("no-extra", "SELECT 1 FROM notes WHERE body <> 'hello'", -1),
                        "check": "sql.row_absent",
                    },
                    _item("two-notes", "SELECT 1 FROM notes HAVING count(*) = 1", 3),
                ],
            }
        )
    )
    monkeypatch.delenv("EGYM_JUDGE_MODEL", raising=False)
    result = CliRunner().invoke(
        app, ["grade", rollout[:6], "--store", store_url, "--tasks", str(repo / "tasks")]
    )
    assert result.exit_code == 0, result.output
    assert "1/5" in result.output and "(was 2/2)" in result.output
    from gym.store import Store

    stored = Store(store_url).get_rollout(rollout).grade_model()
    assert str(stored) == "1/5"
    assert [(i.id, i.status) for i in stored.items if i.section != "damage"] == [
        ("hello", "pass"),
        ("no-extra", "fail"),
        ("two-notes", "fail"),
    ]


def test_egym_grade_of_an_unknown_rollout_is_one_line(tmp_path):
    result = CliRunner().invoke(app, ["grade", "nope", "--store", str(tmp_path / "runs.db")])
    assert result.exit_code == 2
    assert "no rollout matches 'nope'" in result.output and "Traceback" not in result.output
