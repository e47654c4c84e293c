"""Sandbox timings: ready (start until PostgreSQL answers), exec round trip, seal (end of episode), close; idle memory.

.venv/bin/python bench/bench_sandbox.py   -> bench/results/sandbox.json
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from gym.sandbox import DockerSandbox

STARTS = 15
EXECS = 40


def main() -> None:
    ready, close, exec_rtt, seal, idle_mb = [], [], [], [], []
    DockerSandbox.start(run_id="bench-warmup").close()
    for i in range(STARTS):
        t0 = time.perf_counter()
        sb = DockerSandbox.start(run_id="bench-sandbox")
        # Ready = egym-init said READY, which it does only after `pg_ctl -w` saw PostgreSQL accept connections;
        # one query proves it from the outside and is included in the figure.
        assert sb.exec("psql -Atc 'select 1'").output.strip() == "1"
        ready.append(time.perf_counter() - t0)
        if i < 3:
            for _ in range(EXECS):
                t1 = time.perf_counter()
                sb.exec("true")
                exec_rtt.append(time.perf_counter() - t1)
            time.sleep(2)  # let start-up settle before reading memory
            idle_mb.append(sb.container.stats(stream=False)["memory_stats"]["usage"] / 2**20)
        sb.exec("sleep 60 & sleep 60 & psql -c 'select pg_sleep(60)' >/dev/null & true")  # left running
        t3 = time.perf_counter()
        sb.seal()
        seal.append(time.perf_counter() - t3)
        t2 = time.perf_counter()
        sb.close()
        close.append(time.perf_counter() - t2)
    result = {
        "sandbox_ready_s": summary(ready),
        "exec_round_trip_s": summary(exec_rtt),
        "seal_s": summary(seal),  # stop the agent's processes and database sessions before grading
        "close_s": summary(close),
        "idle_memory_mb": summary(idle_mb),
        "target": {"sandbox_ready_median_s": 1.0},
    }
    write("sandbox", result)
    print(
        f"ready median {result['sandbox_ready_s']['median']:.3f}s p90 {result['sandbox_ready_s']['p90']:.3f}s | "
        f"exec {result['exec_round_trip_s']['median'] * 1000:.0f} ms | "
        f"seal {result['seal_s']['median'] * 1000:.0f} ms | close {result['close_s']['median']:.3f}s | "
        f"idle {result['idle_memory_mb']['median']:.0f} MB"
    )


if __name__ == "__main__":
    main()
