"""The batch runner: plan (task, sample) rollouts in the store, run the missing ones, record each result.

Resumable by construction: the plan is inserted idempotently, a rollout is
claimed (compare-and-set) before it runs and recorded in one transaction when
it ends, so running the same command again after any crash (even SIGKILL)
re-runs only what never finished. Containers left behind by a dead runner are
reaped before anything starts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from core.owner import owner_label
from grader.judge import JudgeOptions
from gym.batch.executors import Executor
from gym.batch.progress import BatchProgress, NullProgress
from gym.harness.config import HarnessConfig, harness_config
from gym.rollout import RolloutSpec, run_and_save
from gym.store import RolloutRow, Store
from gym.tasks import Task


@dataclass
class BatchRequest:
    """What to run: every task times `samples`, with one policy, at most `concurrency` at once."""

    tasks: list[Task]
    policy: str
    model: str | None = None
    samples: int = 1
    concurrency: int = 4
    run_id: str | None = None
    kind: str = "batch"
    policy_options: dict[str, Any] = field(default_factory=dict)
    harness: HarnessConfig = field(default_factory=HarnessConfig)  # or its fields as a dict
    retry_failed: bool = True  # on resume, run failed rollouts again (infra failures are usually transient)
    judge: JudgeOptions = field(default_factory=JudgeOptions)

    def __post_init__(self) -> None:
        # Validated here, once, so a bad setting fails the command before any rollout starts.
        self.harness = harness_config(self.harness)

    def config(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "concurrency": self.concurrency,
            "policy_options": self.policy_options,
        }


@dataclass
class BatchResult:
    run_id: str
    planned: int
    skipped: int  # already done before this invocation
    ran: int
    failed: int
    reaped: int
    requeued: int
    rows: list[RolloutRow] = field(default_factory=list)


def default_run_id(req: BatchRequest) -> str:
    """A name derived from what is run, so the same command resumes the same run.

    Another rollout image (`--chat real`) is another run: its rollouts are not the default image's.
    """
    from gym.sandbox.docker_client import CHAT_IMAGES, default_image

    image = default_image()
    parts = [
        sorted(t.key for t in req.tasks),
        req.policy,
        req.model,
        req.samples,
        req.policy_options,
        req.harness.model_dump(mode="json", exclude_defaults=True),
        req.kind,
    ]
    key = json.dumps(parts + ([image] if image != CHAT_IMAGES["compat"] else []), sort_keys=True)
    return f"{req.kind}-{req.policy.replace(':', '.')}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def _spec(run_id: str, row: RolloutRow, task: Task, req: BatchRequest) -> RolloutSpec:
    return RolloutSpec(
        run_id=run_id,
        rollout_id=row.id,
        task=task.key,
        task_path=str(task.path.absolute()),
        sample=row.sample,
        policy=req.policy,
        model=req.model,
        policy_options=req.policy_options,
        harness=req.harness,
        judge=req.judge,
    )


async def run_batch(
    store: Store, req: BatchRequest, executor: Executor, progress: BatchProgress | None = None
) -> BatchResult:
    """Run (or resume) a batch; returns what happened and the run's rollout rows."""
    progress = progress or NullProgress()
    owner = owner_label()
    run_id = req.run_id or default_run_id(req)
    tasks = {t.key: t for t in req.tasks}
    store.create_run(
        run_id,
        policy=req.policy,
        model=req.model,
        tasks=list(tasks),
        samples=req.samples,
        config=req.config(),
        kind=req.kind,
    )
    store.acquire_run(run_id, owner)
    reaped = len(await asyncio.to_thread(executor.reap))
    requeued = store.requeue_stale(run_id)
    rows = store.add_rollouts(run_id, [(key, s) for key in tasks for s in range(req.samples)])
    todo = [r for r in rows if r.status != "done" and (req.retry_failed or r.status != "failed")]
    progress.start(
        run_id, total=len(rows), done=len(rows) - len(todo), mean=store.run_stats(run_id)["mean_reward"]
    )
    limit = asyncio.Semaphore(max(1, req.concurrency))
    failed = 0

    async def one(row: RolloutRow) -> None:
        nonlocal failed
        async with limit:
            if not store.claim(row.id, owner):
                return
            progress.started(row)
            outcome = await run_and_save(
                store, row.id, _spec(run_id, row, tasks[row.task], req), executor.run
            )
            failed += not outcome.ok
            progress.finished(row, outcome)

    status = "interrupted"
    try:
        await asyncio.gather(*(one(r) for r in todo))
        status = "failed" if failed else "done"
    finally:
        progress.close()
        if status == "interrupted":
            store.release(run_id, owner)
            await asyncio.to_thread(executor.cleanup, run_id)
        store.finish_run(run_id, status)
    return BatchResult(
        run_id=run_id,
        planned=len(rows),
        skipped=len(rows) - len(todo),
        ran=len(todo),
        failed=failed,
        reaped=reaped,
        requeued=requeued,
        rows=store.list_rollouts(run_id),
    )
