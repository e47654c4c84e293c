"""The Tasks page and a family's page over HTTP: the library's family levels and tasks, bands per
model, pass rates per policy (never pooled), the filters, and a family's instances linked to their rollouts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import gym.families
from grader.grade import Grade, ItemResult
from gym.authoring import write_scaffold
from gym.dashboard.app import DashboardConfig, create_app
from gym.store import Store

REPO_WORLD = Path(__file__).resolve().parents[2] / "tasks" / "acme" / "world.yaml"
BANDS = """\
stock-check:
  0:
    hf:smollm2@0123456789ab: {band: target, calibration: {pass_rate: 0.5, interval: [0.3, 0.7], samples: 24, policy: hf smollm2, date: 2026-11-26}}
    openai:big@gpu:8000/v1: {band: too-easy, calibration: {pass_rate: 0.95, interval: [0.8, 0.99], samples: 30}}
"""
MEMO = """\
id: memo
title: Write the memo
world: lib
prompt: Write the memo.
split: test
bands:
  hf:smollm2@0123456789ab: {band: hard, calibration: {pass_rate: 0.1, interval: [0.03, 0.3], samples: 20}}
"""
# (run, policy, model): {task: passed}. The oracle passes and null fails the same instances.
RUNS = {
    ("lib-oracle", "oracle", None): {
        "lib/stock-check-l0-s0": True,
        "lib/stock-check-l0-s1": True,
        "lib/memo": True,
    },
    ("lib-null", "null", None): {
        "lib/stock-check-l0-s0": False,
        "lib/stock-check-l0-s1": False,
        "lib/memo": False,
    },
    ("lib-hf", "hf", "smollm2"): {"lib/stock-check-l1-s3": True, "lib/stock-check-l1-s42": False},
}


@pytest.fixture(scope="module")
def tasks_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("library")
    world = root / "lib"
    world.mkdir()
    (world / "world.yaml").write_text(REPO_WORLD.read_text())
    family = write_scaffold(world, "stock-check")
    family.write_text(family.read_text().replace("LEVELS = (0,)", "LEVELS = (0, 1)"))
    (world / "families" / "bands.yaml").write_text(BANDS)
    (world / "memo").mkdir()
    (world / "memo" / "task.yaml").write_text(MEMO)
    return root


@pytest.fixture(scope="module")
def client(tmp_path_factory, tasks_dir):
    path = tmp_path_factory.mktemp("store") / "runs.db"
    store = Store(str(path))
    for (run_id, policy, model), outcomes in RUNS.items():
        store.create_run(run_id, policy=policy, model=model, tasks=list(outcomes), samples=1)
        for row in store.add_rollouts(run_id, [(task, 0) for task in outcomes]):
            store.claim(row.id, "test")
            passed = outcomes[row.task]
            item = ItemResult(id="answer", points=2, status="pass" if passed else "fail", earned=2 * passed)
            g = Grade(task=row.task, earned=item.earned, possible=2, normalized=item.earned / 2, items=[item])
            store.record(row.id, trajectory=None, grade=g, passed=passed, seconds=1.0)
        store.finish_run(run_id, "done")
    store.close()
    app = create_app(DashboardConfig(store=str(path), tasks_dir=tasks_dir, metrics=[]))
    with pytest.MonkeyPatch.context() as mp, TestClient(app) as c:
        mp.setattr(gym.families, "CACHE", tasks_dir / "cache")  # instance counts: not in the repo's .egym
        yield c


def rows(page: str) -> dict[tuple[str, str | None], str]:
    """The Tasks table's rows by (family or task key, level), each row's HTML."""
    found = {}
    for attrs, body in re.findall(r"<tr (data-(?:family|task)=[^>]*)>(.*?)</tr>", page, re.S):
        key = re.search(r'data-(?:family|task)="([^"]+)"', attrs).group(1)
        level = re.search(r'data-level="(\d+)"', attrs)
        found[key, level.group(1) if level else None] = body
    return found


def rate(row: str, policy: str) -> str | None:
    """The pass rate and counts a row shows for one policy: '100.0% 2/2', or None for '—'."""
    cell = re.search(rf'<td class="num[^"]*" data-policy="{policy}"[^>]*>(.*?)</td>', row, re.S).group(1)
    found = re.search(r'data-col="pass-rate">([^<]+)</span> <span class="muted">([^<]+)</span>', cell)
    return f"{found.group(1)} {found.group(2)}" if found else None


def test_the_tasks_page_lists_every_family_level_and_task_with_figures_per_policy(client):
    page = client.get("/tasks").text
    listed = rows(page)
    assert set(listed) == {("lib/stock-check", "0"), ("lib/stock-check", "1"), ("lib/memo", None)}
    level0, level1, memo = (
        listed["lib/stock-check", "0"],
        listed["lib/stock-check", "1"],
        listed["lib/memo", None],
    )
    # the oracle's passes and null's fails on the same instances are two figures, not one 50%
    assert rate(level0, "oracle") == "100.0% 2/2" and rate(level0, "null") == "0.0% 0/2"
    assert rate(memo, "oracle") == "100.0% 1/1" and rate(memo, "null") == "0.0% 0/1"
    # a family level pools its instances (a seed outside the library too); the policy names its model
    assert rate(level1, "hf smollm2") == "50.0% 1/2" and rate(level1, "oracle") is None
    assert 'data-col="interval">0.0% – 65.8%<' in level0  # null's Wilson 95% interval over 0/2
    assert "Stock check" in level0 and "Write the memo" in memo  # titles from the family and task.yaml


def test_bands_are_shown_per_model_with_their_measurement(client):
    listed = rows(client.get("/tasks").text)
    level0 = listed["lib/stock-check", "0"]
    models = dict(re.findall(r'data-model="([^"]+)"><span title="[^"]*" class="band ([a-z-]+)"', level0))
    assert models == {"hf:smollm2@0123456789ab": "target", "openai:big@gpu:8000/v1": "too-easy"}
    assert "Wilson 95% 30.0% – 70.0%, 24 samples, hf smollm2, 2026-11-26" in level0
    assert 'class="band hard">hard<' in listed["lib/memo", None]
    assert 'data-col="bands"><span class="muted">—</span>' in listed["lib/stock-check", "1"]


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("level=1", {("lib/stock-check", "1")}),
        ("split=test", {("lib/memo", None)}),
        ("band=target", {("lib/stock-check", "0")}),
        ("band=unbanded", {("lib/stock-check", "1")}),
        ("model=hf:smollm2@0123456789ab", {("lib/stock-check", "0"), ("lib/memo", None)}),
        ("model=openai:big@gpu:8000/v1&band=unbanded", {("lib/stock-check", "1"), ("lib/memo", None)}),
        ("model=hf:smollm2@0123456789ab&band=hard", {("lib/memo", None)}),
        (
            "level=zero&band=nonsense",
            {("lib/stock-check", "0"), ("lib/stock-check", "1"), ("lib/memo", None)},
        ),
    ],
)
def test_filters_narrow_the_rows(client, query, kept):
    page = client.get(f"/tasks?{query}").text
    assert set(rows(page)) == kept
    assert f"{len(kept)} of 3 rows" in page


def test_the_model_filter_shows_only_that_models_bands(client):
    level0 = rows(client.get("/tasks?model=openai:big@gpu:8000/v1").text)["lib/stock-check", "0"]
    assert 'data-model="openai:big@gpu:8000/v1"' in level0 and "hf:smollm2" not in level0


def test_a_family_page_lists_its_levels_and_instances_linked_to_their_rollouts(client):
    response = client.get("/families/lib/stock-check")
    assert response.status_code == 200
    page = response.text
    instances = re.findall(r'<tr data-instance="([^"]+)">(.*?)</tr>', page, re.S)
    keys = [key for key, _ in instances]
    assert [k for k in keys if "-l0-" in k] == [f"lib/stock-check-l0-s{s}" for s in range(10)]
    assert keys[-1] == "lib/stock-check-l1-s42"  # a seed outside the library, with rollouts
    linked = {key for key, body in instances if f'href="http://testserver/tasks/{key}"' in body}
    assert linked == {
        "lib/stock-check-l0-s0",
        "lib/stock-check-l0-s1",
        "lib/stock-check-l1-s3",
        "lib/stock-check-l1-s42",
    }
    body = dict(instances)["lib/stock-check-l0-s0"]
    assert rate(body, "oracle") == "100.0% 1/1" and rate(body, "null") == "0.0% 0/1"
    assert re.search(r"<td>(train|val|test)</td>", body)  # a library seed's split, from its question
    level = client.get("/tasks/lib/stock-check-l0-s0").text  # the instance's rollouts
    assert 'href="http://testserver/families/lib/stock-check#level-0"' in level
    assert level.count("data-rollout=") == 2
    assert "Task files not found" not in level and "<dt>split</dt>" in level  # generated from its family


def test_an_unknown_family_is_a_404(client):
    response = client.get("/families/lib/nope")
    assert response.status_code == 404 and "No family &#39;lib/nope&#39;" in response.text
