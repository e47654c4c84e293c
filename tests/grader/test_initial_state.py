"""initial_query expansion: rows from an untouched sandbox of the task, cached by the initial state's content."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import RubricError
from grader.expand import expand_items
from grader.initial_state import initial_rows
from grader.probe import StaticProbe
from grader.score import grade
from gym.episode import TaskInitialState
from tests.grader.conftest import make_rubric, py_item

QUERY = "SELECT id, owner FROM claims WHERE status = 'pending' ORDER BY id"


@pytest.fixture
def task(tmp_path):
    from gym.tasks import load_task

    world = tmp_path / "tasks" / "sq"
    (world / "t" / "solution").mkdir(parents=True)
    (world / "world.yaml").write_text(
        "name: sq\ncompany: SQ Inc\ndate: 2025-01-01\n"
        "agent: {name: A, title: T, email: a@sq.example, chat_username: a}\ninitial_state: {sql: [data.sql]}\n"
    )
    (world / "data.sql").write_text(
        "CREATE TABLE claims(id int PRIMARY KEY, owner text, status text);\n"
        "INSERT INTO claims VALUES (1, 'ann', 'pending'), (2, 'bob', 'approved'), (3, 'cy', 'pending');\n"
    )
    (world / "t" / "task.yaml").write_text(
        "id: t\ntitle: T\nworld: sq\nprompt: Approve the claims.\napps: []\n"
    )
    return load_task(world / "t")


def _rubric():
    return make_rubric(
        [
            py_item(
                "approved-{{id}}",
                "sql.value_equals",
                args={
                    "query": "SELECT status FROM claims WHERE id = %(id)s",
                    "params": {"id": "{{id}}"},
                    "expected": "approved",
                },
                description="Claim {{id}} of {{owner}} approved",
                foreach={"initial_query": QUERY},
            )
        ],
        task="sq/t",
    )


@pytest.mark.docker
def test_seed_rows_come_from_a_fresh_sandbox_and_are_cached(task, tmp_path, docker_image, monkeypatch):
    rubric = _rubric()
    cache = tmp_path / "expansions"
    rows = initial_rows(
        rubric, TaskInitialState(task), cache_dir=cache
    )  # starts an untouched sandbox of the task
    assert rows == {QUERY: [{"id": 1, "owner": "ann"}, {"id": 3, "owner": "cy"}]}
    assert len(list(cache.glob("*.json"))) == 1
    items = expand_items(rubric, rows)
    assert [(i.id, i.args["params"]) for i in items] == [("approved-1", {"id": 1}), ("approved-3", {"id": 3})]
    # Grading a final state where the agent approved everything: the item set stays the initial state's two.
    final = StaticProbe(sql={"SELECT status FROM claims WHERE id = %(id)s": [{"status": "approved"}]})
    monkeypatch.setenv("EGYM_EXPANSION_CACHE", str(cache))  # grade(initial=...) resolves through the cache
    result = grade(rubric, final, initial=TaskInitialState(task))
    assert str(result) == "2/2" and [i.id for i in result.items] == ["approved-1", "approved-3"]


def test_a_seed_query_that_fails_on_the_seed_is_a_rubric_error(task, tmp_path):
    rubric = make_rubric(
        [
            py_item(
                "x-{{id}}",
                "sql.row_exists",
                args={"query": "q"},
                foreach={"initial_query": "SELECT id FROM nope"},
            )
        ],
        task="sq/t",
    )
    with pytest.raises(RubricError, match='fails on the initial state: query failed: relation "nope"'):
        initial_rows(
            rubric,
            TaskInitialState(task),
            probe=StaticProbe(sql={"SELECT id FROM nope": 'query failed: relation "nope" does not exist'}),
            cache_dir=tmp_path,
        )


def test_cached_rows_win_over_any_later_state_and_seed_edits_invalidate(task, tmp_path):
    rubric = _rubric()
    cache = tmp_path / "cache"
    first = initial_rows(
        rubric,
        TaskInitialState(task),
        probe=StaticProbe(sql={QUERY: [{"id": 1, "owner": "ann"}]}),
        cache_dir=cache,
    )
    again = initial_rows(
        rubric,
        TaskInitialState(task),
        probe=StaticProbe(sql={QUERY: [{"id": 99, "owner": "eve"}]}),
        cache_dir=cache,
    )
    assert again == first
    seed = Path(task.path).parent / "data.sql"
    seed.write_text(seed.read_text() + "-- edited\n")
    changed = initial_rows(
        rubric,
        TaskInitialState(task),
        probe=StaticProbe(sql={QUERY: [{"id": 5, "owner": "dee"}]}),
        cache_dir=cache,
    )
    assert changed == {QUERY: [{"id": 5, "owner": "dee"}]}
