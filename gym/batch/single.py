"""`egym rollout`: one episode with its turns printed as they happen, stored like any batch rollout."""

from __future__ import annotations

import functools
from typing import Any

from rich.console import Console

from core.owner import owner_label
from core.trajectory import Step
from grader.judge import JudgeOptions
from gym.batch.view import grade_view, header, render_step
from gym.harness.config import HarnessConfig, harness_config
from gym.rollout import RolloutSpec, resolve_rollout_fn, run_and_save, run_rollout
from gym.store import RolloutRow, Store
from gym.tasks import Task


async def run_single(
    store: Store,
    task: Task,
    *,
    policy: str,
    model: str | None = None,
    options: dict[str, Any] | None = None,
    harness: HarnessConfig | dict[str, Any] | None = None,
    sample: int = 0,
    run_id: str | None = None,
    judge: JudgeOptions | None = None,
    rollout_fn: str | None = None,
    console: Console | None = None,
) -> RolloutRow:
    """Run and store one rollout of `task`; returns the stored row."""
    console = console or Console()
    harness = harness_config(harness)
    # A `--rollout-fn` stand-in replaces the whole rollout (tests); it fails here, before anything is stored.
    stand_in = resolve_rollout_fn(rollout_fn) if rollout_fn else None
    owner = owner_label()
    run = store.create_run(
        run_id,
        policy=policy,
        model=model,
        tasks=[task.key],
        kind="rollout",
        config={
            "policy_options": options or {},
            "harness": harness.model_dump(mode="json", exclude_defaults=True),
        },
    )
    store.acquire_run(run.id, owner)
    (row,) = store.add_rollouts(run.id, [(task.key, sample)])
    if not store.claim(row.id, owner):
        console.print(f"rollout {row.id} of run {run.id} is already done: showing it")
        store.finish_run(run.id, "done")
        return store.get_rollout(row.id)
    spec = RolloutSpec(
        run_id=run.id,
        rollout_id=row.id,
        task=task.key,
        task_path=str(task.path.absolute()),
        sample=sample,
        policy=policy,
        model=model,
        policy_options=options or {},
        harness=harness,
        judge=judge or JudgeOptions(),
    )
    console.print(f"[bold]{task.key}[/] with policy [bold]{policy}[/]  rollout {row.id}  run {run.id}")

    def on_step(step: Step) -> None:
        console.print(render_step(step))

    rollout = stand_in or functools.partial(run_rollout, on_step=on_step)
    status = "interrupted"
    try:
        with console.status("running the episode…"):
            outcome = await run_and_save(store, row.id, spec, rollout)
        status = "done" if outcome.ok else "failed"
    finally:
        store.finish_run(run.id, status)
    console.print(header(outcome.trajectory, outcome.grade, error=outcome.error))
    if outcome.grade is not None:
        console.print(grade_view(outcome.grade))
    return store.get_rollout(row.id)
