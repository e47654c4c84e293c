"""`oracle`: replays a task's reference solution (solution/actions.yaml) as tool calls, one step per turn.

    - tool: bash
      args: {command: "psql -c 'select 1'"}
    - tool: chat.post_message
      args: {channel: finance, message: "Done."}
    - answer: "The report is in /workspace/report.xlsx."

The policy is stateless: its position is read back from the ids of its own
earlier tool calls (`oracle-<step>`), so one instance can serve any number of
concurrent episodes of the same task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, TypeAdapter, ValidationError

from core.errors import PolicyError, TaskError
from core.strict import StrictModel
from core.trajectory import AssistantTurn, Message, ToolCall
from gym.tasks import Task

ID_PREFIX = "oracle-"


class ToolStep(StrictModel):
    tool: str = Field(
        description="Canonical tool name: `bash`, `read`, ..., or `server.tool` (`chat.post_message`)."
    )
    args: dict[str, Any] = Field(default_factory=dict)


class AnswerStep(StrictModel):
    answer: str = Field(description="The final message; ends the episode.")


SolutionStep = ToolStep | AnswerStep
_STEPS = TypeAdapter(list[SolutionStep])


def load_solution(path: str | Path) -> list[SolutionStep]:
    path = Path(path)
    if not path.is_file():
        raise TaskError(f"{path}: reference solution not found (the oracle policy replays it)")
    try:
        data = yaml.safe_load(path.read_text()) or []
        return _STEPS.validate_python(data)
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: invalid YAML: {exc}".replace("\n", " ")) from None
    except ValidationError as exc:
        step = exc.errors()[0]["loc"][0]
        raise TaskError(
            f"{path}: step {step}: each step is {{tool: name, args: {{...}}}} or {{answer: text}}"
        ) from None


class OraclePolicy:
    name = "oracle"
    model = None
    per_task = True  # make_policy passes it the task

    def __init__(
        self,
        task: Task | None = None,
        *,
        steps: list[SolutionStep] | None = None,
        solution_path: str | Path | None = None,
        strict: bool = False,
    ):
        """`strict`: a tool error on one of its own steps ends the episode (an author checking a solution)."""
        if steps is None:
            if solution_path is None and task is None:
                raise PolicyError("oracle policy: pass the task (or solution_path / steps) to replay")
            steps = load_solution(solution_path or task.path / task.solution)
        self.steps, self.strict = steps, strict

    async def next(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantTurn:
        position = self._position(messages)
        if position >= len(self.steps):
            return AssistantTurn(content="done")
        step = self.steps[position]
        if isinstance(step, AnswerStep):
            return AssistantTurn(content=step.answer)
        offered = {t["function"]["name"] for t in tools}
        if step.tool not in offered:
            raise PolicyError(
                f"solution step {position} calls '{step.tool}', which this episode does not offer "
                f"(offered: {', '.join(sorted(offered))})"
            )
        call = ToolCall(id=f"{ID_PREFIX}{position}", name=step.tool, arguments=json.dumps(step.args))
        return AssistantTurn(tool_calls=[call])

    def _position(self, messages: list[Message]) -> int:
        """One past the last step this oracle issued in `messages` (0 at the start)."""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            ids = [c.id for c in message.tool_calls if c.id.startswith(ID_PREFIX)]
            if message.role == "assistant" and ids:
                step = int(ids[-1].removeprefix(ID_PREFIX))
                if self.strict:
                    self._check(messages[index + 1 :], ids[-1], step)
                return step + 1
        return 0

    def _check(self, after: list[Message], call_id: str, step: int) -> None:
        for message in after:
            if message.tool_call_id == call_id and message.content.startswith("Error"):
                raise PolicyError(f"solution step {step} failed: {message.content[:300]}")
