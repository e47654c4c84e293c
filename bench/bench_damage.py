"""What the damage section costs: marking the baseline at READY, and reading the changes at grade time.

    .venv/bin/python bench/bench_damage.py   -> bench/results/damage.json

On the flagship task's sandbox (acme/q1-close: 18 tables, ~1,650 rows, 15 files,
chat): the three baseline steps egym-init runs before READY, timed from the host
through `docker exec` as egym-init would run them, and `SandboxProbe.changes()`
after a destructive episode (every ticket deleted, every invoice changed, the
workspace wiped). Both are reported with the task sandbox's own start-up time,
measured in the same run, as the reference.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from grader.probe import SandboxProbe
from gym.sandbox.launch import task_sandbox
from gym.tasks import load_task

RUNS = 7
MARK = [
    "/bin/bash",
    "-c",
    "/opt/egym/mcp_wrappers/db/image/baseline"
    " && /opt/egym/mcp_wrappers/chat/image/baseline > /tmp/posts.tsv"
    " && /opt/egym/venv/bin/python3 -I /opt/egym/bin/list-workspace > /tmp/workspace.json",
]
WRECK = (
    "psql -qc 'delete from support_tickets' -c \"update invoices set status = 'void'\" 2>&1 | tail -1; "
    "rm -rf /workspace/*"
)


def main() -> None:
    task = load_task("tasks/acme/q1-close")
    ready, mark, read = [], [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        with task_sandbox(task, run_id="bench-damage") as sandbox:
            ready.append(time.perf_counter() - started)
            t0 = time.perf_counter()
            assert sandbox.exec(MARK, user="root", cwd="/").ok
            mark.append(time.perf_counter() - t0)
            assert sandbox.exec(WRECK, cwd="/workspace").ok
            with SandboxProbe(sandbox) as probe:
                t1 = time.perf_counter()
                changes = probe.changes()
                read.append(time.perf_counter() - t1)
            assert changes is not None and changes.row_counts[("support_tickets", "deleted")] == 305
    write(
        "damage",
        {
            "task": task.key,
            "task_sandbox_ready_s": summary(ready),
            "mark_baseline_s": summary(mark),
            "read_changes_s": summary(read),
            "mark_over_ready": round(summary(mark)["median"] / summary(ready)["median"], 3),
            "note": "read_changes includes the chat snapshot (~0.5 s), which chat items and the diff take anyway",
        },
    )


if __name__ == "__main__":
    main()
