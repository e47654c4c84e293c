"""Dashboard page load times with 10,000 rollouts in the run store.

    .venv/bin/python bench/bench_dashboard.py   -> bench/results/dashboard.json

The store is generated quickly through the store's models and sessions (bulk
inserts, realistic sizes: ~8-turn trajectories, 30 rubric items per rollout),
then every page is fetched over HTTP (server response, body included) and
loaded in headless Chromium (navigation start to the load event).
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from sqlalchemy import func, insert, select

from bench.common import summary, write
from gym.dashboard.app import DashboardConfig, create_app
from gym.dashboard.server import BackgroundServer
from gym.store import ItemResultRow, RolloutRow, Store, new_id

RUNS, TASKS, SAMPLES, ITEMS, TURNS = 20, 5, 100, 30, 8  # 20 x 5 x 100 = 10,000 rollouts
SERVER_REPEATS, BROWSER_REPEATS = 10, 5
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def trajectory(task: str, rng: random.Random) -> dict:
    steps, messages = (
        [],
        [
            {"role": "system", "content": "You are an analyst at Acme."},
            {"role": "user", "content": f"Please do {task}."},
        ],
    )
    for i in range(TURNS):
        call = {
            "id": f"c{i}",
            "name": "db_query",
            "arguments": json.dumps({"sql": f"select * from t{i} limit 20"}),
        }
        output = "\n".join(
            f"{j} | item {rng.randint(1, 999)} | {rng.random():.4f}" for j in range(rng.randint(2, 40))
        )
        steps.append(
            {
                "index": i,
                "turn": {"content": f"Step {i}: checking table t{i}.", "tool_calls": [call]},
                "results": [{"call_id": f"c{i}", "name": "db_query", "output": output, "seconds": 0.05}],
                "policy_seconds": 1.2,
                "tool_seconds": 0.05,
            }
        )
        messages += [
            {"role": "assistant", "content": f"Step {i}", "tool_calls": [call]},
            {"role": "tool", "content": output, "tool_call_id": f"c{i}", "name": "db_query"},
        ]
    return {
        "task": task,
        "policy": "bench",
        "messages": messages,
        "steps": steps,
        "stop_reason": "answered",
        "final_answer": "Done: the report is posted.",
        "seconds": 12.0,
    }


def fill(store: Store, rng: random.Random) -> None:
    tasks = [f"acme/bench-task-{t}" for t in range(TASKS)]
    templates = [trajectory(t, rng) for t in tasks for _ in range(3)]
    for r in range(RUNS):
        run = store.create_run(
            f"bench-run-{r:02d}",
            policy=rng.choice(["oracle", "null", "openai"]),
            tasks=tasks,
            samples=SAMPLES,
        )
        skill = rng.random()
        rollouts, items = [], []
        for t, task in enumerate(tasks):
            for sample in range(SAMPLES):
                rid = new_id()
                passes = [rng.random() < skill * (1 - k / (2 * ITEMS)) for k in range(ITEMS)]
                earned = sum(5 for ok in passes if ok)
                reward = earned / (5 * ITEMS)
                rollouts.append(
                    {
                        "id": rid,
                        "run_id": run.id,
                        "task": task,
                        "sample": sample,
                        "status": "done",
                        "attempts": 1,
                        "seconds": rng.uniform(5, 60),
                        "policy_seconds": 4.0,
                        "stop_reason": "answered",
                        "turns": TURNS,
                        "trajectory": templates[t * 3 + sample % 3],
                        "reward": reward,
                        "earned": earned,
                        "possible": 5 * ITEMS,
                        "incomplete": False,
                        "gated": False,
                        "passed": reward >= 0.8,
                        "grade_meta": {"rubric_hash": "bench", "seconds": 0.3, "meta": {}},
                    }
                )
                items += [
                    {
                        "rollout_id": rid,
                        "position": k,
                        "item_id": f"item-{k:02d}",
                        "section": f"s{k % 4}",
                        "description": f"Check number {k}",
                        "kind": "judge" if k % 10 == 9 else "python",
                        "points": 5,
                        "gate": False,
                        "status": "pass" if ok else "fail",
                        "earned": 5 if ok else 0,
                        "evidence": "value seen: 42",
                        "verdicts": [],
                        "seconds": 0.01,
                    }
                    for k, ok in enumerate(passes)
                ]
        with store.session() as s:
            s.execute(insert(RolloutRow), rollouts)
            s.execute(insert(ItemResultRow), items)
        store.finish_run(run.id, "done")


def metrics_file(folder: Path, steps: int = 1000) -> Path:
    path = folder / "train" / "metrics.jsonl"
    path.parent.mkdir(parents=True)
    rng = random.Random(2)
    with path.open("w") as handle:
        for step in range(steps):
            mean = min(1.0, 0.1 + step / steps * 0.7 + rng.random() * 0.05)
            handle.write(
                json.dumps(
                    {
                        "step": step,
                        "reward_mean": mean,
                        "reward_std": 0.1,
                        "pass_rate": mean * 0.8,
                        "kl": 0.001 * step,
                        "tokens": 4096,
                    }
                )
                + "\n"
            )
    return path


def pages(base: str, store: Store, client: httpx.Client) -> dict[str, str]:
    with store.session() as s:
        rollout_id = s.scalar(select(RolloutRow.id).limit(1).offset(5000))
    training = client.get(f"{base}/training").text
    file_id = training.split('data-file="', 1)[1].split('"', 1)[0]
    return {
        "runs": "/runs",
        "run": "/runs/bench-run-07",
        "run_last_page": "/runs/bench-run-07?page=10",
        "tasks": "/tasks",
        "task": "/tasks/acme/bench-task-2",
        "task_in_run": "/tasks/acme/bench-task-2?run=bench-run-07",
        "rollout": f"/rollouts/{rollout_id}",
        "training": f"/training/{file_id}",
        "not_found": "/rollouts/does-not-exist",
    }


def time_server(client: httpx.Client, url: str) -> tuple[list[float], int]:
    client.get(url)  # warm (template compile, SQLite page cache)
    samples, size = [], 0
    for _ in range(SERVER_REPEATS):
        t0 = time.perf_counter()
        response = client.get(url)
        samples.append(time.perf_counter() - t0)
        size = len(response.content)
    return samples, size


def time_browser(urls: dict[str, str]) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {name: [] for name in urls}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        for name, url in urls.items():
            page.goto(url)
            for _ in range(BROWSER_REPEATS):
                page.goto(url, wait_until="load")
                out[name].append(
                    page.evaluate(
                        "() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd / 1000; }"
                    )
                )
        browser.close()
    return out


def main() -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "runs.db"
        store = Store(str(db))
        t0 = time.perf_counter()
        fill(store, rng)
        generate_s = time.perf_counter() - t0
        with store.session() as s:
            counts = {
                "rollouts": s.scalar(select(func.count()).select_from(RolloutRow)),
                "item_results": s.scalar(select(func.count()).select_from(ItemResultRow)),
            }
        metrics = metrics_file(Path(tmp))
        app = create_app(DashboardConfig(store=str(db), metrics=[metrics.parent]))
        with BackgroundServer(app) as base, httpx.Client(timeout=60) as client:
            urls = pages(base, store, client)
            server = {name: time_server(client, base + url) for name, url in urls.items()}
            browser = time_browser({name: base + url for name, url in urls.items()})
        result = {
            "store": {
                **counts,
                "runs": RUNS,
                "size_mb": round(db.stat().st_size / 2**20, 1),
                "generate_s": round(generate_s, 2),
                "backend": "sqlite",
            },
            "pages": {
                name: {
                    "url": url,
                    "html_kb": round(server[name][1] / 1024, 1),
                    "server_response_s": summary(server[name][0]),
                    "browser_load_s": summary(browser[name]),
                }
                for name, url in urls.items()
            },
            "target": {"server_response_median_s": 0.5, "browser_load_median_s": 1.0},
        }
        store.close()
    write("dashboard", result)
    for name, row in result["pages"].items():
        print(
            f"{name:16s} server {row['server_response_s']['median'] * 1000:7.1f} ms  "
            f"browser {row['browser_load_s']['median'] * 1000:7.1f} ms  {row['html_kb']:7.1f} KB"
        )


if __name__ == "__main__":
    main()
