"""Batch throughput: rollouts per minute at concurrency 1, 2, 4, 8 with the oracle on a bundled task.

Also: the overhead per rollout (everything except waiting for the policy: sandbox
start and removal, harness and tool calls, grading, store writes), split into its
parts; peak memory (runner process, and the machine's used memory above the
idle baseline, which covers the containers); the run-store write time.

    .venv/bin/python bench/bench_batch.py [--task tasks/acme/overdue-invoices] [--levels 1,2,4,8] [--no-mcp]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import summary, write  # noqa: E402
from gym.batch import BatchRequest, run_batch  # noqa: E402
from gym.batch.executors import LocalExecutor  # noqa: E402
from gym.store import Store  # noqa: E402
from gym.tasks import discover_tasks  # noqa: E402


def used_memory_mb() -> float:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    kb = int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])
    return kb / 1024


class MemorySampler:
    """Peak of the machine's used memory while a level runs, sampled every 0.1 s."""

    def __init__(self) -> None:
        self.peak = used_memory_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, used_memory_mb())

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def parts(rows) -> dict[str, list[float]]:
    """Per rollout: total, policy, overhead (= total - policy), and its split."""
    out: dict[str, list[float]] = {
        k: [] for k in ("total", "policy", "overhead", "episode_tools", "grading", "sandbox")
    }
    for row in rows:
        traj, grade = row.trajectory_model(), row.grade_model()
        policy = row.policy_seconds or 0.0
        out["total"].append(row.seconds)
        out["policy"].append(policy)
        out["overhead"].append(row.seconds - policy)
        out["episode_tools"].append(traj.seconds - policy)
        out["grading"].append(grade.seconds)
        out["sandbox"].append(row.seconds - traj.seconds - grade.seconds)  # start + remove (+ task loading)
    return out


async def level(store: Store, tasks, concurrency: int, count: int, harness: dict) -> dict:
    req = BatchRequest(tasks=tasks, policy="oracle", samples=count, concurrency=concurrency,
                       run_id=f"bench-c{concurrency}-{time.time_ns()}", harness=harness)  # fmt: skip
    baseline = used_memory_mb()
    with MemorySampler() as memory:
        started = time.monotonic()
        result = await run_batch(store, req, LocalExecutor())
        wall = time.monotonic() - started
    done = store.list_rollouts(result.run_id, status="done", with_items=True)
    split = parts(done)
    return {
        "concurrency": concurrency,
        "rollouts": len(result.rows),
        "failed": result.failed,
        "mean_reward": round(sum(r.reward for r in done) / len(done), 4) if done else None,
        "wall_s": round(wall, 2),
        "rollouts_per_min": round(len(done) * 60 / wall, 1),
        "per_rollout_s": {k: summary(v) for k, v in split.items()} if done else {},
        "peak_extra_memory_mb": round(memory.peak - baseline, 1),
    }


def store_write_ms(store: Store, run_id: str) -> dict:
    row = store.list_rollouts(run_id, with_items=True)[0]
    traj, grade = row.trajectory_model(), row.grade_model()
    times = []
    for _ in range(20):
        started = time.perf_counter()
        store.record(row.id, trajectory=traj, grade=grade, passed=row.passed, seconds=row.seconds)
        times.append((time.perf_counter() - started) * 1000)
    return {**summary(times), "items": len(grade.items)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="tasks/acme/overdue-invoices")
    parser.add_argument("--levels", default="1,2,4,8")
    parser.add_argument(
        "--per-level", type=int, default=3, help="rollouts per level = this x concurrency (min 4)"
    )
    parser.add_argument(
        "--no-mcp", action="store_true", help="start no MCP servers (bash and file tools only)"
    )
    args = parser.parse_args()
    tasks = discover_tasks(args.task)
    harness = {"mcp_servers": {}} if args.no_mcp else {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        await level(store, tasks, 1, 1, harness)  # warm-up: world image, judge/seed caches
        levels = []
        for c in (int(x) for x in args.levels.split(",")):
            levels.append(await level(store, tasks, c, max(4, args.per_level * c), harness))
            print(f"concurrency {c}: {levels[-1]['rollouts_per_min']} rollouts/min, "
                  f"overhead median {levels[-1]['per_rollout_s'].get('overhead', {}).get('median')} s", flush=True)  # fmt: skip
        record_ms = store_write_ms(store, store.list_runs(limit=1)[0].id)
    base = levels[0]["rollouts_per_min"] or 1
    write("batch", {
        "task": tasks[0].key,
        "policy": "oracle",
        "mcp_servers": "none" if args.no_mcp else "task default",
        "levels": levels,
        "speedup_vs_c1": {str(lv["concurrency"]): round(lv["rollouts_per_min"] / base, 2) for lv in levels},
        "overhead_s_at_c1": levels[0]["per_rollout_s"].get("overhead"),
        "runner_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "store_record_ms": record_ms,
        "aim": "overhead per rollout < 2 s; near-linear scaling until the cores saturate",
    })  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
