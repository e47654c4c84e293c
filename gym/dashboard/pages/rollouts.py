"""One rollout: its trajectory turn by turn and its rubric breakdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import selectinload
from starlette.requests import Request
from starlette.responses import Response

from core.trajectory import Message, ToolCall, ToolResult, Trajectory
from grader.grade import Grade, ItemResult
from gym.dashboard.pages.common import ctx, not_found
from gym.store import RolloutRow

# Where a final-state diff may be recorded (grade meta first, then trajectory meta).
DIFF_KEYS = ("state_diff", "diff")


@dataclass
class CallView:
    call: ToolCall
    result: ToolResult | None = None


@dataclass
class TurnView:
    """One assistant turn with its tool calls and their results side by side."""

    index: int
    content: str
    calls: list[CallView] = field(default_factory=list)
    policy_seconds: float | None = None
    tool_seconds: float | None = None
    tokens: int | None = None
    compacted: bool = False


@dataclass
class SectionView:
    name: str
    earned: float
    possible: int
    items: list[ItemResult]


def turns_from_steps(traj: Trajectory) -> list[TurnView]:
    turns = []
    for step in traj.steps:
        results = {r.call_id: r for r in step.results}
        calls = [CallView(c, results.get(c.id)) for c in step.turn.tool_calls]
        turns.append(
            TurnView(
                step.index,
                step.turn.content,
                calls,
                step.policy_seconds,
                step.tool_seconds,
                step.turn.completion_tokens,
                step.compacted,
            )
        )
    return turns


def turns_from_messages(messages: list[Message]) -> list[TurnView]:
    """For trajectories recorded without steps: pair tool messages with the calls they answer."""
    turns: list[TurnView] = []
    pending: dict[str, CallView] = {}
    for message in messages:
        if message.role == "assistant":
            turn = TurnView(len(turns), message.content, [CallView(c) for c in message.tool_calls])
            pending.update({view.call.id: view for view in turn.calls})
            turns.append(turn)
        elif message.role == "tool" and message.tool_call_id in pending:
            view = pending.pop(message.tool_call_id)
            view.result = ToolResult(call_id=view.call.id, name=view.call.name, output=message.content)
    return turns


def preamble(traj: Trajectory) -> list[Message]:
    """The system and user messages before the first assistant turn."""
    out = []
    for message in traj.messages:
        if message.role == "assistant":
            break
        out.append(message)
    return out


def sections(grade: Grade) -> list[SectionView]:
    totals = grade.sections()
    groups: dict[str, list[ItemResult]] = {name: [] for name in totals}
    for item in grade.items:
        groups[item.section or ""].append(item)
    return [SectionView(name, *totals[name], groups[name]) for name in totals]


def state_diff(grade: Grade | None, traj: Trajectory | None) -> Any:
    for meta in (grade.meta if grade else {}, traj.meta if traj else {}):
        for key in DIFF_KEYS:
            if meta.get(key):
                return meta[key]
    return None


def rollout_detail(request: Request) -> Response:
    c = ctx(request)
    rollout_id = request.path_params["rollout_id"]
    with c.store.session() as s:
        row = s.get(RolloutRow, rollout_id, options=[selectinload(RolloutRow.items)])
        if row is None:
            raise not_found(f"No rollout '{rollout_id}' in the run store.")
        run = row.run
    problems = []
    try:
        traj = row.trajectory_model()
    except (ValidationError, OSError) as exc:
        traj, problems = None, [f"trajectory unreadable: {str(exc).splitlines()[0]}"]
    grade = row.grade_model()
    turns = (turns_from_steps(traj) if traj.steps else turns_from_messages(traj.messages)) if traj else []
    return c.render(
        request,
        "rollout.html",
        row=row,
        run=run,
        traj=traj,
        grade=grade,
        turns=turns,
        preamble=preamble(traj) if traj else [],
        sections=sections(grade) if grade else [],
        diff=state_diff(grade, traj),
        problems=problems,
    )
