"""`egym export RUN --format parquet`: one row per rollout, conversational prompt/completion, reward."""

from __future__ import annotations

import asyncio
import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from grader.grade import Grade, ItemResult
from gym.batch import BatchRequest, run_batch
from gym.batch.executors import LocalExecutor
from gym.cli import app
from gym.export import export_run
from gym.store import Store
from gym.tasks import discover_tasks
from tests.gym.task_fixture import PROMPT, write_mini_world

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def run(tmp_path_factory, docker_image):
    """A real 4-rollout run: the oracle in sample 0, the null policy in samples 1-3; sample 3 made incomplete."""
    root = tmp_path_factory.mktemp("export")
    tasks = discover_tasks(write_mini_world(root, {"pass-1": {}}))
    store = Store(str(root / "runs.db"))
    req = BatchRequest(tasks=tasks, policy="known-rate", samples=4, concurrency=4, run_id="exp")
    asyncio_result = asyncio.run(
        run_batch(store, req, LocalExecutor("tests.gym.batch_fakes:known_rate_rollout"))
    )
    assert asyncio_result.failed == 0
    last = store.list_rollouts("exp")[3]
    broken = Grade(
        task=last.task,
        earned=0,
        possible=8,
        normalized=0,
        incomplete=True,
        items=[ItemResult(id="x", points=8, status="error", error="chat service down")],
    )
    store.record(last.id, trajectory=last.trajectory_model(), grade=broken, passed=False)
    return store, root


def test_parquet_reads_back_with_one_row_per_complete_rollout(run):
    store, root = run
    path, count = export_run(store, "exp", out=root / "exp.parquet")
    table = pq.read_table(path)
    assert count == table.num_rows == 3
    assert {"prompt", "completion", "reward", "task", "sample", "messages", "data_source"} <= set(
        table.column_names
    )
    rows = sorted(table.to_pylist(), key=lambda r: r["sample"])
    assert [r["sample"] for r in rows] == [0, 1, 2]
    assert [r["reward"] for r in rows] == [1.0, 0.0, 0.0]
    oracle = rows[0]
    assert [m["role"] for m in oracle["prompt"]] == ["system", "user"] and oracle["prompt"][1][
        "content"
    ] == PROMPT
    assert [m["role"] for m in oracle["completion"]] == [
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    call = oracle["completion"][0]["tool_calls"][0]
    assert (
        call["function"]["name"] == "bash"
        and "UPDATE orders" in json.loads(call["function"]["arguments"])["command"]
    )
    assert len(json.loads(oracle["messages"])) == 7
    assert (oracle["earned"], oracle["possible"], oracle["passed"]) == (8.0, 8, True)


def test_incomplete_grades_only_on_request(run):
    store, root = run
    _, count = export_run(store, "exp", out=root / "all.parquet", include_incomplete=True)
    assert count == 4
    assert pq.read_table(root / "all.parquet").column("incomplete").to_pylist().count(True) == 1


def test_trl_and_datasets_read_the_export(run):
    from datasets import Dataset
    from trl.data_utils import is_conversational

    store, root = run
    path, _ = export_run(store, "exp", out=root / "trl.parquet")
    ds = Dataset.from_parquet(str(path))
    assert ds.num_rows == 3
    assert is_conversational({"prompt": ds[0]["prompt"], "completion": ds[0]["completion"]})


def test_cli_export_and_jsonl(run):
    store, root = run
    out = root / "exp.jsonl"
    result = CliRunner().invoke(
        app, ["export", "exp", "--format", "jsonl", "--out", str(out), "--store", store.url]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 3 row(s)" in result.output
    assert len(out.read_text().splitlines()) == 3
    bad = CliRunner().invoke(app, ["export", "nope", "--store", store.url])
    assert bad.exit_code == 2 and "no run 'nope'" in bad.output
