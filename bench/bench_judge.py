"""SmolLM2-135M as a local judge (EGYM_JUDGE_MODEL=hf:smollm2): how often it agrees with the expected verdicts.

The bundled tasks' judge items are graded on the oracle's end state (expected:
pass, it is the reference solution) and on the null policy's (expected: fail,
nothing was done). Agreement is the share of verdicts that match; items the
judge could not grade (an unusable answer) are counted apart.

    .venv/bin/python bench/bench_judge.py   -> bench/results/judge.json
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import write  # noqa: E402
from gym.batch import BatchRequest, run_batch  # noqa: E402
from gym.batch.executors import LocalExecutor  # noqa: E402
from gym.store import Store  # noqa: E402
from gym.tasks import discover_tasks  # noqa: E402

JUDGE = "hf:smollm2"


def judge_tasks() -> list:
    from grader.loader import load_rubric, rubric_for_task

    tasks = discover_tasks(ROOT / "tasks" / "acme")
    return [t for t in tasks if any(i.kind == "judge" for i in load_rubric(rubric_for_task(t)).items)]


async def verdicts(store: Store, tasks: list, policy: str) -> list[dict]:
    req = BatchRequest(tasks=tasks, policy=policy, samples=1, concurrency=2, run_id=f"bench-judge-{policy}")
    result = await run_batch(store, req, LocalExecutor())
    out = []
    for row in store.list_rollouts(result.run_id, with_items=True):
        grade = row.grade_model()
        for item in grade.items if grade else []:
            if item.kind == "judge":
                out.append(
                    {
                        "task": row.task,
                        "item": item.id,
                        "status": item.status,
                        "expected": "pass" if policy == "oracle" else "fail",
                        "error": item.error,
                    }
                )
    return out


def main() -> None:
    os.environ["EGYM_JUDGE_MODEL"] = JUDGE
    # A verdict is a short JSON object; on 2 busy cores a 135M model needs minutes for a queue of long prompts.
    os.environ.setdefault("EGYM_JUDGE_MAX_TOKENS", "96")
    os.environ.setdefault("EGYM_JUDGE_TIMEOUT_S", "600")
    os.environ.pop("OPENAI_API_KEY", None)
    tasks = judge_tasks()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        rows = [*asyncio.run(verdicts(store, tasks, "oracle")), *asyncio.run(verdicts(store, tasks, "null"))]
    graded = [r for r in rows if r["status"] in ("pass", "fail")]
    agree = sum(r["status"] == r["expected"] for r in graded)
    result = {
        "judge": JUDGE,
        "tasks": [t.key for t in tasks],
        "verdicts": len(rows),
        "graded": len(graded),
        "not_graded": len(rows) - len(graded),
        "agreement": round(agree / len(graded), 3) if graded else None,
        "agreement_on_oracle": _rate([r for r in graded if r["expected"] == "pass"]),
        "agreement_on_null": _rate([r for r in graded if r["expected"] == "fail"]),
        "seconds": round(time.perf_counter() - started, 1),
        "judge_max_tokens": int(os.environ["EGYM_JUDGE_MAX_TOKENS"]),
        "judge_timeout_s": float(os.environ["EGYM_JUDGE_TIMEOUT_S"]),
        "items": rows,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "items"}, indent=2))
    write("judge", result)


def _rate(rows: list[dict]) -> float | None:
    return round(sum(r["status"] == r["expected"] for r in rows) / len(rows), 3) if rows else None


if __name__ == "__main__":
    main()
