"""Re-grade a stored rollout (`egym grade ROLLOUT`), for rubric iteration without re-running the model.

The rollout's container is gone, so its final state is rebuilt: a fresh sandbox
of the task, and the harness replays the agent's recorded turns (its tool calls
run again, the model is never asked). The rebuilt state is then graded with the
task's *current* rubric; the evidence about what the agent said (final answer,
transcript) comes from the stored trajectory.

Limits: tools whose effect depends on time or on injected faults may not
reproduce exactly; replay runs with faults off. Coworkers answer the replayed calls as they did
the original ones; replies a model reworded come from the trajectory (seeded into the cache).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.trajectory import AssistantTurn, Message, Trajectory

if TYPE_CHECKING:
    from grader.grade import Grade
    from grader.judge import Judge
    from grader.rubric import Rubric
    from gym.tasks import Task


class ReplayPolicy:
    """Returns a recorded trajectory's assistant turns in order; then its final answer."""

    name = "replay"

    def __init__(self, trajectory: Trajectory):
        self.trajectory = trajectory
        self.model = trajectory.model
        self._turns = [step.turn for step in trajectory.steps]
        self._next = 0

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        if self._next < len(self._turns):
            turn = self._turns[self._next]
            self._next += 1
            return turn
        return AssistantTurn(content=self.trajectory.final_answer or "")


async def replay_and_grade(
    task: Task, trajectory: Trajectory, *, rubric: Rubric | None = None, judge: Judge | None = None
) -> tuple[Grade, Trajectory]:
    """A fresh sandbox, the recorded turns replayed in it, then graded; returns (Grade, replayed Trajectory)."""
    from gym.episode import open_episode
    from gym.harness.config import HarnessConfig
    from gym.harness.coworker_model import CoworkerModel, CoworkerModelConfig

    coworkers = CoworkerModelConfig(**trajectory.meta.get("coworker_model", {}))
    if coworkers.mode != "rules":
        CoworkerModel(coworkers).seed_cache(trajectory.meta.get("coworkers", []))
    config = HarnessConfig(
        max_turns=len(trajectory.steps) + 1,
        time_limit_s=max(task.limits.time_limit_s, 3600),
        coworkers=coworkers,
    )
    async with open_episode(task, run_id="regrade") as episode:
        replayed = await episode.play(ReplayPolicy(trajectory), config)
        grade = await episode.grade(trajectory, judge=judge, rubric=rubric)
    return grade, replayed


def replay_differences(original: Trajectory, replayed: Trajectory) -> list[str]:
    """Tool calls whose error status differs between the original run and the replay (a sign of drift)."""
    out = []
    for a, b in zip(original.steps, replayed.steps, strict=False):
        for ra, rb in zip(a.results, b.results, strict=False):
            if ra.is_error != rb.is_error:
                out.append(
                    f"turn {a.index}: {ra.name} {'failed' if ra.is_error else 'succeeded'} originally, "
                    f"{'failed' if rb.is_error else 'succeeded'} on replay"
                )
    return out
