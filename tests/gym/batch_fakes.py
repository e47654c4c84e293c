"""Stand-in rollout functions for batch-runner tests: real containers, a scripted score.

`sandbox_rollout` starts a real sandbox (labelled with the run and rollout,
so the reaper and the leftover-container checks see it), does real work in
it, and scores the sample by a known rule: sample % 4 == 0 passes. The
harness and grader have their own tests; these keep the runner's tests about
the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import yaml

from core.trajectory import AssistantTurn, Message, Step, Trajectory
from grader.grade import Grade, ItemResult
from gym.rollout import RolloutOutcome, RolloutSpec
from gym.sandbox.launch import in_worker_thread

IMAGE = "egym/world:latest"


def known_score(sample: int) -> float:
    return 1.0 if sample % 4 == 0 else 0.25


def fake_grade(task: str, normalized: float) -> Grade:
    earned = round(normalized * 4)
    items = [
        ItemResult(id=f"i{i}", points=1, status="pass" if i < earned else "fail", earned=float(i < earned))
        for i in range(4)
    ]
    return Grade(task=task, earned=earned, possible=4, normalized=earned / 4, items=items)


def fake_trajectory(spec: RolloutSpec, answer: str) -> Trajectory:
    messages = [
        Message(role="system", content="You work at Demo."),
        Message(role="user", content="Say hello."),
    ]
    turn = AssistantTurn(content=answer)
    messages.append(turn.message())
    return Trajectory(
        task=spec.task,
        policy=spec.policy,
        messages=messages,
        stop_reason="answered",
        final_answer=answer,
        steps=[Step(index=0, turn=turn)],
    )


async def sandbox_rollout(spec: RolloutSpec) -> RolloutOutcome:
    from gym.sandbox import DockerSandbox

    started = time.monotonic()
    delay = float(os.environ.get("EGYM_FAKE_DELAY", "0"))

    @contextlib.contextmanager
    def plain_sandbox():
        sandbox = DockerSandbox.start(IMAGE, run_id=spec.run_id, rollout_id=spec.rollout_id)
        try:
            yield sandbox
        finally:
            sandbox.close()

    async with in_worker_thread(plain_sandbox()) as sandbox:
        cmd = f"sleep {delay}; echo sample-{spec.sample} > /workspace/out && cat /workspace/out"
        result = await asyncio.to_thread(sandbox.exec, cmd, timeout=60)
    answer = result.output.strip()
    grade = fake_grade(spec.task, known_score(spec.sample))
    return RolloutOutcome(
        rollout_id=spec.rollout_id,
        task=spec.task,
        sample=spec.sample,
        trajectory=fake_trajectory(spec, answer),
        grade=grade,
        passed=grade.normalized >= 0.8,
        seconds=time.monotonic() - started,
    )


async def flaky_rollout(spec: RolloutSpec) -> RolloutOutcome:
    """Fails every odd sample (no grade), like a sandbox that could not start."""
    if spec.sample % 2:
        return RolloutOutcome(
            rollout_id=spec.rollout_id,
            task=spec.task,
            sample=spec.sample,
            error="SandboxError: injected start failure",
        )
    grade = fake_grade(spec.task, 1.0)
    return RolloutOutcome(
        rollout_id=spec.rollout_id,
        task=spec.task,
        sample=spec.sample,
        trajectory=fake_trajectory(spec, "ok"),
        grade=grade,
        passed=True,
    )


def write_stub_tasks(root: Path, names: list[str], world: str = "demo") -> Path:
    """A world folder with bare tasks (no seed): enough for the runner, which only needs keys and paths."""
    wdir = root / world
    wdir.mkdir(parents=True, exist_ok=True)
    (wdir / "world.yaml").write_text(
        yaml.safe_dump(
            {
                "name": world,
                "company": "Demo Ltd",
                "date": "2025-03-14",
                "agent": {
                    "name": "Ann Agent",
                    "title": "Analyst",
                    "email": "ann@demo.test",
                    "chat_username": "ann",
                },
            }
        )
    )
    for name in names:
        (wdir / name).mkdir(exist_ok=True)
        (wdir / name / "task.yaml").write_text(
            yaml.safe_dump({"id": name, "title": name, "world": world, "prompt": "Say hello."})
        )
    return wdir


async def known_rate_rollout(spec: RolloutSpec) -> RolloutOutcome:
    """A real rollout (sandbox, harness, grader) whose policy is the oracle for the first N samples, else null.

    N comes from the task id `pass-N`, so a task's pass rate over K samples is exactly N/K.
    """
    from gym.harness.config import HarnessConfig
    from gym.rollout import run_rollout

    passes = int(spec.task.rsplit("pass-", 1)[1])
    policy = "oracle" if spec.sample < passes else "null"
    return await run_rollout(
        spec.model_copy(update={"policy": policy, "harness": HarnessConfig(mcp_servers={})})
    )
