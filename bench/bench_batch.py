"""Batch throughput: rollouts per minute at concurrency 1, 2, 4, 8 with the oracle on a bundled task.

Also: the overhead per rollout (everything except waiting for the policy: sandbox
start and removal, harness and tool calls, grading, store writes), split into its
parts; peak memory (runner process, and the machine's used memory above the
idle baseline, which covers the containers); the run-store write time.

    .venv/bin/python bench/bench_batch.py [--task tasks/acme/collections-list] [--levels 1,2,4,8] [--no-mcp]
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

from bench.common import summary, write
from gym.batch import BatchRequest, run_batch
from gym.batch.executors import LocalExecutor
from gym.store import Store
from gym.tasks import discover_tasks


def used_memory_mb() -> float:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    kb = int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])
    return kb / 1024


def container_memory_mb(container_id: str) -> tuple[float, float] | None:
    """(current, peak) memory of a container from its cgroup (v1 cgroupfs or v2 systemd layout)."""
    for folder, current, peak in (
        (
            f"/sys/fs/cgroup/memory/docker/{container_id}",
            "memory.usage_in_bytes",
            "memory.max_usage_in_bytes",
        ),
        (f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope", "memory.current", "memory.peak"),
    ):
        try:
            return tuple(int(Path(folder, f).read_text()) / 2**20 for f in (current, peak))  # type: ignore[return-value]
        except (OSError, ValueError):
            continue
    return None


class MemorySampler:
    """While a level runs, every 0.1 s: the machine's used memory, and the run's containers' cgroup memory."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.peak = used_memory_mb()
        self.containers_peak_total = 0.0
        self.container_peaks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from gym.sandbox.docker_client import client

        while not self._stop.wait(0.1):
            self.peak = max(self.peak, used_memory_mb())
            found = client().containers.list(filters={"label": f"egym.run={self.run_id}"}, sparse=True)
            total = 0.0
            for container in found:
                memory = container_memory_mb(container.id)
                if memory:
                    total += memory[0]
                    self.container_peaks[container.id] = max(
                        self.container_peaks.get(container.id, 0.0), memory[1]
                    )
            self.containers_peak_total = max(self.containers_peak_total, total)

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
    run_id = f"bench-c{concurrency}-{time.time_ns()}"
    req = BatchRequest(
        tasks=tasks, policy="oracle", samples=count, concurrency=concurrency, run_id=run_id, harness=harness
    )
    baseline = used_memory_mb()
    with MemorySampler(run_id) as memory:
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
        "peak_machine_memory_above_idle_mb": round(memory.peak - baseline, 1),
        "containers_peak_total_mb": round(memory.containers_peak_total, 1),
        "container_peak_mb": summary(list(memory.container_peaks.values()))
        if memory.container_peaks
        else None,
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
    parser.add_argument("--task", default="tasks/acme/collections-list")
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
        await level(store, tasks, 1, 1, harness)  # warm-up: world image, judge/initial-query caches
        levels = []
        for c in (int(x) for x in args.levels.split(",")):
            levels.append(await level(store, tasks, c, max(4, args.per_level * c), harness))
            print(
                f"concurrency {c}: {levels[-1]['rollouts_per_min']} rollouts/min, "
                f"overhead median {levels[-1]['per_rollout_s'].get('overhead', {}).get('median')} s",
                flush=True,
            )
        record_ms = store_write_ms(store, store.list_runs(limit=1)[0].id)
    base = levels[0]["rollouts_per_min"] or 1
    write(
        "batch",
        {
            "task": tasks[0].key,
            "policy": "oracle",
            "mcp_servers": "none" if args.no_mcp else "task default",
            "levels": levels,
            "speedup_vs_c1": {
                str(lv["concurrency"]): round(lv["rollouts_per_min"] / base, 2) for lv in levels
            },
            "overhead_s_at_c1": levels[0]["per_rollout_s"].get("overhead"),
            "runner_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "store_record_ms": record_ms,
            "aim": "overhead per rollout < 2 s; near-linear scaling until the cores saturate",
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
