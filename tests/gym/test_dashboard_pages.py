"""The dashboard's pages over HTTP (no browser): status codes, escaping, folding, read-only, training files."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from core.errors import StoreError
from core.trajectory import AssistantTurn, Message, Step, ToolCall, ToolResult, Trajectory
from grader.grade import Grade, ItemResult, Verdict
from gym.dashboard.app import DashboardConfig, create_app, open_store
from gym.store import RunRow, Store

LONG = "\n".join(f"row {i} <b>bold?</b>" for i in range(40))


def trajectory(task: str) -> Trajectory:
    call = ToolCall(id="c1", name="db_query", arguments='{"sql": "select *\\nfrom invoices", "limit": 5}')
    short = ToolCall(id="c2", name="bash", arguments="{not json")
    return Trajectory(
        task=task,
        policy="scripted",
        stop_reason="answered",
        final_answer="All <done>.",
        messages=[
            Message(role="system", content="You are an employee."),
            Message(role="user", content="Do the task"),
        ],
        steps=[
            Step(
                index=0,
                turn=AssistantTurn(content="Looking <script>alert(1)</script>", tool_calls=[call, short]),
                results=[
                    ToolResult(call_id="c1", name="db_query", output=LONG),
                    ToolResult(call_id="c2", name="bash", output="ok", is_error=True),
                ],
            )
        ],
    )


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    path = tmp_path_factory.mktemp("dash") / "runs.db"
    store = Store(str(path))
    store.create_run("run-a", policy="scripted", tasks=["w/t"], samples=3)
    for i, row in enumerate(store.add_rollouts("run-a", [("w/t", i) for i in range(3)])):
        store.claim(row.id, "test")
        items = [
            ItemResult(id="sql-1", section="data", points=5, status="pass", earned=5, evidence="1 row"),
            ItemResult(
                id="judge-1",
                section="report",
                kind="judge",
                points=3,
                status="fail",
                verdicts=[Verdict(model="judge-m", verdict="fail", score=0.0, reason="Missing the total.")],
            ),
            ItemResult(id="pen", section="data", points=-2, status="pass", earned=0),
        ]
        if i == 2:  # a rollout that broke things: nothing earned, damage charged below 0
            items = [
                ItemResult(id="sql-1", section="data", points=8, status="fail"),
                ItemResult(id="damage.rows", section="damage", points=-1, status="fail", earned=-1),
            ]
        earned = sum(item.earned for item in items)
        diff = "--- before/invoices\n+++ after/invoices\n-42|sent\n+42|paid"
        g = Grade(
            task="w/t",
            earned=max(0, earned),
            raw_earned=earned,
            possible=8,
            normalized=max(0, earned) / 8,
            items=items,
            meta={"state_diff": diff},
        )
        store.record(row.id, trajectory=trajectory("w/t"), grade=g, passed=False, seconds=3.0)
    store.finish_run("run-a", "done")
    # Family instances: level 0 solved at both seeds (consistent), level 1 failed at one.
    outcomes = {"w/price-l0-s0": True, "w/price-l0-s1": True, "w/price-l1-s0": True, "w/price-l1-s1": False}
    store.create_run("run-f", policy="scripted", tasks=list(outcomes), samples=1)
    for row in store.add_rollouts("run-f", [(task, 0) for task in outcomes]):
        store.claim(row.id, "test")
        passed = outcomes[row.task]
        item = ItemResult(id="answer", section="answer", points=2, status="pass" if passed else "fail")
        item.earned = 2 if passed else 0
        g = Grade(task=row.task, earned=item.earned, possible=2, normalized=item.earned / 2, items=[item])
        store.record(row.id, trajectory=trajectory(row.task), grade=g, passed=passed, seconds=1.0)
    store.finish_run("run-f", "done")
    store.close()
    return str(path)


@pytest.fixture(scope="module")
def metrics_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("train") / "exp1"
    folder.mkdir()
    lines = [
        json.dumps({"step": s, "reward_mean": s / 10, "reward_std": 0.1, "pass_rate": s / 20, "kl": 0.01})
        for s in range(5)
    ]
    (folder / "metrics.jsonl").write_text("\n".join(lines) + '\n{"step": 5, "rew')  # trainer mid-write
    sft = folder.parent / "sft1"
    sft.mkdir()
    sft_lines = [json.dumps({"step": s, "loss": 2.0 - s / 2, "tokens": 300, "lr": 1e-4}) for s in range(1, 4)]
    (sft / "metrics.jsonl").write_text("\n".join(sft_lines) + "\n")
    return folder.parent


@pytest.fixture(scope="module")
def tasks_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("tasks")
    (root / "w").mkdir()
    (root / "w" / "world.yaml").write_text("name: w\n")
    for task_id, band in (("t", "target"), ("fresh", None)):
        folder = root / "w" / task_id
        folder.mkdir()
        lines = [
            f"id: {task_id}",
            f"title: Title of {task_id}",
            "world: w",
            f"prompt: Please do {task_id} <now>.",
        ]
        (folder / "task.yaml").write_text("\n".join(lines + ([f"band: {band}"] if band else [])) + "\n")
    (root / "w" / "broken").mkdir()
    (root / "w" / "broken" / "task.yaml").write_text("id: [unclosed\n")
    return root


@pytest.fixture(scope="module")
def client(store_url, metrics_dir, tasks_dir):
    app = create_app(DashboardConfig(store=store_url, metrics=[metrics_dir], tasks_dir=tasks_dir, per_page=2))
    with TestClient(app) as c:
        yield c


def rollout_ids(store_url: str) -> list[str]:
    store = Store(store_url)
    try:
        return [r.id for r in store.list_rollouts("run-a")]
    finally:
        store.close()


@pytest.mark.parametrize(
    "path", ["/runs/nope", "/tasks/w/nope", "/rollouts/nope", "/training/0123", "/nothing"]
)
def test_unknown_ids_get_the_404_page(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "404" in response.text and "Back to the runs" in response.text


def test_every_route_is_read_only(client):
    assert client.post("/runs").status_code == 405
    assert client.delete("/runs/run-a").status_code == 405


def test_store_connections_refuse_writes(store_url):
    store = open_store(store_url)
    try:
        with (
            pytest.raises(StoreError, match="readonly|read-only|query_only|attempt to write"),
            store.session() as s,
        ):
            s.add(RunRow(id="sneaky", policy="x"))
    finally:
        store.close()


def test_a_missing_store_is_a_one_line_error_and_is_not_created(tmp_path):
    missing = tmp_path / "none" / "runs.db"
    with pytest.raises(StoreError, match="no run store at"):
        open_store(str(missing))
    assert not missing.exists()
    from gym.cli import app

    result = CliRunner().invoke(app, ["serve", "--store", str(missing)])
    assert result.exit_code == 2
    assert "no run store at" in result.output and "Traceback" not in result.output


def test_run_page_pages_its_rollouts(client, store_url):
    first = client.get("/runs/run-a")
    assert first.status_code == 200
    assert "page 1 of 2" in first.text
    ids = rollout_ids(store_url)
    assert all(i in first.text for i in ids[:2]) and ids[2] not in first.text
    assert ids[2] in client.get("/runs/run-a?page=2").text
    assert client.get("/runs/run-a?page=abc").status_code == 200  # a bad page number is page 1


def test_run_page_shows_pass_rate_and_consistency_per_family_level(client):
    page = client.get("/runs/run-f").text
    assert "1/2 family levels consistent" in page
    rows = re.findall(r'<tr data-family="w/price" data-level="(\d)">(.*?)</tr>', page, re.S)
    cells = {level: re.findall(r"<td[^>]*>([^<]*)</td>", body) for level, body in rows}
    assert cells["0"][2] == "2/2 all" and cells["0"][5] == "100%"  # the family cell is a link
    assert cells["1"][2] == "1/2" and cells["1"][5] == "50%"
    assert 'id="run-families"' not in client.get("/runs/run-a").text  # no family instances, no table


def test_rollout_page_escapes_folds_and_shows_the_rubric(client, store_url):
    pages = [client.get(f"/rollouts/{rid}").text for rid in rollout_ids(store_url)]
    html = next(page for page in pages if "damage.rows" not in page)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold?</b>" not in html
    # the 40-line result is folded, the two-character one is not
    long_result = re.search(r'data-long="yes".*?</div>\s*<details class="fold output">', html, re.S)
    assert long_result is not None
    assert re.search(r'data-long="no".*?<pre class="output">ok</pre>', html, re.S)
    assert "sql:\n  select *\n  from invoices\nlimit: 5" in unescape(html)  # arguments made readable
    assert "{not json" in html  # malformed arguments shown as written
    assert 'id="total-earned">5<' in html and 'id="total-possible">8<' in html
    assert "Missing the total." in html and "judge-m" in html
    assert '<span class="del">-42|sent</span>' in html and '<span class="add">+42|paid</span>' in html
    assert 'id="rollout-raw"' not in html  # raw equals the score: nothing to add


def test_rollout_page_shows_the_raw_score_and_the_damage_section(client, store_url):
    pages = [client.get(f"/rollouts/{rid}").text for rid in rollout_ids(store_url)]
    html = next(page for page in pages if "damage.rows" in page)
    assert re.search(r'id="rollout-raw">\(raw -1, damage -1\)<', html)
    assert 'data-section="damage"' in html


def _training_page(client, folder: str) -> str:
    listing = client.get("/training").text
    file_id = re.search(rf'data-file="(\w+)">\s*<td><a href="[^"]+">[^<]*/{folder}/metrics.jsonl<', listing)
    return client.get(f"/training/{file_id.group(1)}").text


def test_training_pages_chart_the_metrics_and_report_the_broken_line(client):
    html = _training_page(client, "exp1")
    reward = html[html.index('id="reward-chart"') : html.index('id="pass-chart"')]
    ys = [float(v) for v in re.findall(r'class="point" data-x="\d+" data-y="([\d.]+)"', reward)]
    assert ys == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert "lines skipped: 1" in html and "line 6" in html
    assert 'id="loss-chart"' not in html


def test_an_sft_run_gets_its_loss_charted_instead_of_rewards(client):
    html = _training_page(client, "sft1")
    loss = html[html.index('id="loss-chart"') :]
    ys = [float(v) for v in re.findall(r'class="point" data-x="\d+" data-y="([\d.]+)"', loss)]
    assert ys == pytest.approx([1.5, 1.0, 0.5])
    assert 'id="reward-chart"' not in html


def test_tasks_come_from_the_store_and_the_task_folders(client):
    listing = client.get("/tasks").text
    assert 'data-task="w/t"' in listing and 'data-task="w/fresh"' in listing  # no rollouts yet, still listed
    assert 'class="band target">target<' in listing and "Title of fresh" in listing
    fresh = client.get("/tasks/w/fresh")
    assert fresh.status_code == 200
    assert "Please do fresh &lt;now&gt;." in fresh.text and "no rollouts" in fresh.text
    broken = client.get("/tasks/w/broken")
    assert broken.status_code == 404 and "task.yaml" in broken.text  # says what is wrong with the file


def test_a_training_run_links_each_step_to_the_rollouts_it_sampled(tmp_path):
    """The trainer keeps its rollouts in the store (run kind train, with their step); the page links to them."""
    out = tmp_path / "grpo-run"
    out.mkdir()
    (out / "metrics.jsonl").write_text(
        "\n".join(json.dumps({"step": s, "reward_mean": 0.5, "pass_rate": 0.5}) for s in (1, 2)) + "\n"
    )
    store = Store(str(tmp_path / "runs.db"))
    store.create_run("train-grpo-run-abc", policy="grpo", kind="train", config={"output_dir": str(out)})
    store.create_run("train-other", policy="grpo", kind="train", config={"output_dir": str(tmp_path / "x")})
    for step, places in ((1, [0, 1]), (2, [0])):
        keys = [("w/t", step * 100_000 + place) for place in places]
        for row in store.add_rollouts("train-grpo-run-abc", keys, step=step):
            g = Grade(task="w/t", earned=1, possible=2, normalized=0.5, items=[])
            store.record(row.id, trajectory=trajectory("w/t"), grade=g, passed=False, seconds=1.0)
    store.close()
    app = create_app(DashboardConfig(store=str(tmp_path / "runs.db"), metrics=[tmp_path], tasks_dir=tmp_path))
    with TestClient(app) as http:
        listing = http.get("/training").text
        file_id = re.search(r'data-file="(\w+)"', listing).group(1)
        page = http.get(f"/training/{file_id}").text
        assert "train-other" not in page  # another folder's run is not linked
        assert re.search(r'id="stored-rollouts">.*train-grpo-run-abc</a> \(3\)', page)
        link = re.search(r'href="([^"]*train-grpo-run-abc\?step=1#rollouts)"', page).group(1)
        step_page = http.get(link).text
    assert step_page.count("data-rollout=") == 2 and 'id="step-filter"' in step_page
    assert ">1:0<" in step_page and ">1:1<" in step_page and ">2:0<" not in step_page
