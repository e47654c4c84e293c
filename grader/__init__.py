"""The grader: rubric files, built-in checks, the LLM judge, and scoring into a Grade.

Entry points (imported lazily so `import grader` stays cheap):
- `grade_task(task, sandbox, trajectory)`: grade a live sandbox with the task's rubric (rollouts).
- `grader.score.grade(rubric, probe, trajectory, judge=...)`: the general form.
- `grader.loader.load_rubric(path)`, `grader.lint.lint(paths)`.
"""

from __future__ import annotations

import asyncio
from typing import Any


def default_judge(policy_model: str | None = None, options: Any = None) -> Any:
    """A Judge from the environment (EGYM_JUDGE_* / OPENAI_*) and a command's JudgeOptions, or None without a model."""
    from grader.judge import Judge, JudgeConfig

    overrides = options.model_dump(exclude_defaults=True) if options is not None else {}
    config = JudgeConfig.from_env(**overrides)
    return Judge(config, policy_model=policy_model) if config.model else None


async def grade_task(task: Any, sandbox: Any, trajectory: Any = None, *, judge: Any = None, rubric: Any = None,
                     judge_options: Any = None) -> Any:
    """Grade `sandbox`'s current state for `task` (a gym.tasks.Task) with its rubric; returns a Grade.

    First the sandbox is sealed: every process the agent left is stopped, so what is
    read is what the agent did by the end of its episode (docs/security.md).
    The judge defaults to the environment's (see `default_judge`); without one, judge items
    are `error` and the grade is incomplete. `seed_query` expansions resolve through grader.seed.
    """
    from grader.loader import load_rubric, rubric_for_task
    from grader.probe import SandboxProbe
    from grader.score import grade_async

    rubric = rubric or load_rubric(rubric_for_task(task))
    if judge is None:
        judge = default_judge(getattr(trajectory, "model", None), judge_options)
    ended = await asyncio.to_thread(sandbox.seal)
    probe = SandboxProbe(sandbox)
    try:
        grade = await grade_async(rubric, probe, trajectory, judge=judge, task=task)
        grade.meta["episode_end"] = ended
        grade.meta["state_diff"] = await asyncio.to_thread(_state_diff, sandbox, probe, task)
        return grade
    finally:
        await asyncio.to_thread(probe.close)


def _state_diff(sandbox: Any, probe: Any, task: Any) -> str:
    """The final-state summary for people (never part of the score); a note saying why when unreadable."""
    from grader.state_diff import state_diff

    try:
        chat = probe.chat() if "chat" in getattr(task, "apps", ()) else None
    except Exception:  # noqa: BLE001 - no chat section then; the rubric's chat items report the problem
        chat = None
    try:
        return state_diff(sandbox, chat)
    except Exception as exc:  # noqa: BLE001 - a summary must never break a grade
        return f"(final-state diff unavailable: {type(exc).__name__}: {exc})"


__all__ = ["default_judge", "grade_task"]
