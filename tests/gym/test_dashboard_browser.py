"""The dashboard in a real browser (Debian's Chromium, headless) over a store filled by real runs.

The store holds two real batches on the bundled task acme/collections-list
(the `oracle` and `null` policies: real containers, real PostgreSQL, the real
grader); the training page reads the metrics JSONL of a real three-step run
of the trainer's CPU toy config. Every number the pages show is checked
against the store (or the metrics file). Screenshots of each page go to
bench/results/screenshots/.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gym.dashboard.app import DashboardConfig, create_app
from gym.dashboard.server import BackgroundServer
from gym.store import Store

REPO = Path(__file__).resolve().parents[2]
TASK_KEY = "acme/collections-list"
SHOTS = REPO / "bench" / "results" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
pytestmark = [pytest.mark.docker, pytest.mark.slow]


# -- fixtures: real runs, a real training run, the server, the browser ---------------------------


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, docker_image) -> Path:
    from gym.batch import BatchRequest, run_batch
    from gym.batch.executors import make_executor
    from gym.tasks import load_task

    path = tmp_path_factory.mktemp("dashboard") / "runs.db"
    task = load_task(REPO / "tasks" / TASK_KEY)
    store = Store(str(path))
    try:
        for policy in ("oracle", "null"):
            req = BatchRequest(tasks=[task], policy=policy, samples=2, concurrency=2, run_id=f"dash-{policy}")
            # in a thread of its own: Playwright's sync API runs an event loop in this one
            with ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, run_batch(store, req, make_executor("local"))).result()
        failed = [(r.run_id, r.error) for r in store.list_rollouts() if r.status != "done"]
        assert not failed, f"real rollouts failed, the dashboard has nothing to show: {failed}"
    finally:
        store.close()
    return path


@pytest.fixture(scope="module")
def metrics_path(tmp_path_factory) -> Path:
    from trainer.config import load_config
    from trainer.local import build_trainer

    out = tmp_path_factory.mktemp("train") / "toy"
    overrides = [
        "steps=3",
        f"output_dir={out}",
        "checkpoint.interval=0",
        "rollout.group_size=4",
        "rollout.tasks_per_step=2",
    ]
    build_trainer(load_config(REPO / "trainer" / "configs" / "toy.yaml", overrides)).run()
    return out / "metrics.jsonl"


@pytest.fixture(scope="module")
def store(store_path):
    s = Store(str(store_path), create=False)
    yield s
    s.close()


@pytest.fixture(scope="module")
def base_url(store_path, metrics_path):
    config = DashboardConfig(store=str(store_path), tasks_dir=REPO / "tasks", metrics=[metrics_path.parent])
    with BackgroundServer(create_app(config)) as url:
        yield url


@pytest.fixture(scope="module")
def browser(base_url):  # after the store is filled (see store_path)
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium missing: run `make browser` (apt-get install chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    yield context.new_page()
    context.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def points(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


# -- tests -----------------------------------------------------------------------------------------


def test_runs_page_shows_each_runs_numbers_from_the_store(page, base_url, store):
    page.goto(f"{base_url}/runs")
    for run_id in ("dash-oracle", "dash-null"):
        stats = store.run_stats(run_id)
        row = page.locator(f"tr[data-run='{run_id}']")
        assert row.locator("[data-col=rollouts]").inner_text() == str(stats["total"])
        assert row.locator("[data-col=mean]").inner_text() == f"{stats['mean_reward']:.3f}"
        assert row.locator("[data-col=pass-rate]").inner_text().startswith(pct(stats["pass_rate"]))
    oracle, null = store.run_stats("dash-oracle"), store.run_stats("dash-null")
    assert oracle["mean_reward"] == 1.0 and null["mean_reward"] < 0.5  # the runs really differ
    shoot(page, "runs")


def test_click_from_run_to_task_to_rollout_and_expand_a_tool_result(page, base_url, store):
    rows = store.list_rollouts("dash-oracle", with_items=True)
    page.goto(f"{base_url}/runs")
    page.click("tr[data-run='dash-oracle'] a")
    assert page.locator("h1").inner_text().startswith("Run dash-oracle")
    # the histogram draws every done rollout in the bin of its reward
    bars = page.locator("#run-histogram rect.bar")
    counts = [int(bars.nth(i).get_attribute("data-count")) for i in range(bars.count())]
    expected = [0] * 10
    for r in rows:
        expected[min(int(r.reward * 10), 9)] += 1
    assert counts == expected
    task_row = page.locator(f"#run-tasks tr[data-task='{TASK_KEY}']")
    assert (
        task_row.locator("[data-col=mean]").inner_text() == f"{sum(r.reward for r in rows) / len(rows):.3f}"
    )
    shoot(page, "run")

    task_row.locator("a").click()
    assert page.locator("h1").inner_text().startswith(TASK_KEY)
    _check_task_page(page, store)
    shoot(page, "task")

    page.click(f"tr[data-rollout='{rows[0].id}'] a")
    assert page.locator("h1").inner_text().startswith(f"Rollout {rows[0].id}")
    _check_rubric(page, store.get_rollout(rows[0].id))
    _expand_a_long_result(page, store.get_rollout(rows[0].id))
    shoot(page, "rollout")


def _check_task_page(page, store) -> None:
    from gym.tasks import load_task

    task = load_task(REPO / "tasks" / TASK_KEY)
    assert page.locator("#task-prompt").inner_text().strip() == task.prompt.strip()
    # calibration history: one point per run, at the run's pass rate (the page arrived filtered to dash-oracle)
    with page.expect_navigation():
        page.select_option("select[name=run]", "")
    dots = page.locator("#task-history circle.point")
    runs = ["dash-oracle", "dash-null"]
    assert dots.count() == len(runs)
    for i, run_id in enumerate(runs):
        done = store.list_rollouts(run_id, status="done")
        rate = sum(bool(r.passed) for r in done if not r.incomplete) / len(
            [r for r in done if not r.incomplete]
        )
        assert float(dots.nth(i).get_attribute("data-y")) == pytest.approx(rate, abs=1e-4)
        cells = page.locator(f"#history tr[data-run='{run_id}']")
        assert cells.locator("[data-col=pass-rate]").inner_text() == pct(rate)
    # item pass rates over all runs equal the stored item results
    results = [i for r in store.list_rollouts(task=TASK_KEY, status="done", with_items=True) for i in r.items]
    table = page.locator("#item-rates tbody tr")
    assert table.count() == len({i.item_id for i in results})
    for n in range(table.count()):
        row = table.nth(n)
        item_id = row.get_attribute("data-item")
        mine = [i for i in results if i.item_id == item_id]
        passed = sum(i.status == "pass" for i in mine)
        assert row.locator("td").nth(4).text_content().strip() == f"{passed}/{len(mine)}"  # folded when > 30
    with page.expect_navigation():
        page.select_option("select[name=run]", "dash-oracle")


def _check_rubric(page, row) -> None:
    grade = row.grade_model()
    assert page.locator("#rollout-score").inner_text() == f"{points(grade.earned)}/{grade.possible}"
    assert page.locator("#total-earned").inner_text() == points(grade.earned)
    assert page.locator("#total-possible").inner_text() == str(grade.possible)
    for name, (earned, possible) in grade.sections().items():
        section = page.locator(f"#sections tr[data-section='{name}']")
        assert section.locator("[data-col=earned]").inner_text() == points(earned)
        assert section.locator("[data-col=possible]").inner_text() == str(possible)
    for item in grade.items:  # text_content: rows of folded (all-passed) sections are not rendered
        cells = page.locator(f"#items tr[data-item='{item.id}']")
        assert cells.locator("[data-col=earned]").text_content().strip() == points(item.earned)
        assert cells.locator("[data-col=points]").text_content().strip() == str(item.points)
        assert cells.locator(".badge").first.text_content().strip() == item.status


def _expand_a_long_result(page, row) -> None:
    traj = row.trajectory_model()
    outputs = {r.call_id: r.output for step in traj.steps for r in step.results}
    long_call = page.locator(".call:has(.result[data-long='yes'])").first
    assert long_call.count() == 1, "the oracle's query result should be long enough to be folded"
    details = long_call.locator("details.fold")
    body = details.locator("pre")
    assert details.get_attribute("open") is None and not body.is_visible()
    details.locator("summary").click()
    assert body.is_visible()
    assert body.inner_text().strip() == outputs[long_call.get_attribute("data-call")].strip()


def test_null_rollout_shows_its_failures_open_and_its_clean_sections_folded(page, base_url, store):
    row = store.get_rollout(store.list_rollouts("dash-null")[0].id)
    page.goto(f"{base_url}/rollouts/{row.id}")
    _check_rubric(page, row)
    grade = row.grade_model()
    assert grade.by_status("fail"), "the null policy should fail some items"
    for name in grade.sections():
        clean = all(i.status == "pass" for i in grade.items if (i.section or "") == name)
        folded = page.locator(f"#items details[data-section='{name}']").get_attribute("open") is None
        assert folded == clean, name
    shoot(page, "rollout-null")


def test_tasks_page_lists_the_library_per_policy_filters_it_and_opens_a_family(page, base_url, store):
    from gym.families import families

    library = families((REPO / "tasks" / "acme").resolve())
    page.goto(f"{base_url}/tasks")
    assert page.locator("#task-list tr[data-family]").count() == sum(len(f.levels) for f in library.values())
    # each policy's own pass rate over complete grades, never the two runs pooled
    row = page.locator(f"#task-list tr[data-task='{TASK_KEY}']")
    for run_id in ("dash-oracle", "dash-null"):
        graded = [r for r in store.list_rollouts(run_id, status="done") if not r.incomplete]
        rate = sum(bool(r.passed) for r in graded) / len(graded)
        cell = row.locator(f"td[data-policy='{run_id.removeprefix('dash-')}']")
        assert cell.locator("[data-col=pass-rate]").inner_text() == pct(rate)
    shoot(page, "tasks")

    with page.expect_navigation():
        page.select_option("select[name=level]", "2")
    shown = page.locator("#task-list tbody tr")
    expected = sorted(f"acme/{name}" for name, f in library.items() if 2 in f.levels)
    assert [shown.nth(i).get_attribute("data-family") for i in range(shown.count())] == expected
    assert {shown.nth(i).get_attribute("data-level") for i in range(shown.count())} == {"2"}

    shown.first.locator("a").click()
    family = library[expected[0].split("/", 1)[1]]
    assert page.locator("h1").inner_text().startswith(expected[0])
    assert page.locator("#family-levels tbody tr").count() == len(family.levels)
    assert page.locator("tr[data-instance]").count() == 10 * len(family.levels)  # the library's seeds 0-9
    shoot(page, "family")


def test_training_page_charts_the_trainers_metrics(page, base_url, metrics_path):
    records = [json.loads(line) for line in metrics_path.read_text().splitlines() if line]
    page.goto(f"{base_url}/training")
    page.click("#training-files a")
    dots = page.locator("#reward-chart .series[data-series='train'] circle.point")
    assert dots.count() == len(records)
    for i, record in enumerate(records):
        assert float(dots.nth(i).get_attribute("data-x")) == record["step"]
        assert float(dots.nth(i).get_attribute("data-y")) == pytest.approx(record["reward_mean"], abs=1e-4)
    assert page.locator("#steps tbody tr").count() == len(records)
    shoot(page, "training")


def test_unknown_ids_show_the_404_page(page, base_url):
    response = page.goto(f"{base_url}/rollouts/does-not-exist")
    assert response.status == 404
    assert "404" in page.locator("h1").inner_text()
    assert "does-not-exist" in page.locator(".detail").inner_text()
    shoot(page, "not-found")
