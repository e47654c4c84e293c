"""The agent loop: ask the policy, run its tool calls in the sandbox, repeat until it answers or a limit hits.

`run_episode` never raises for a broken episode: a policy or infrastructure
failure ends it with stop_reason "error" and the message in
`Trajectory.error`, so a batch of thousands carries on. Tool failures are not
episode failures: they are tool results the model reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Callable

from core.trajectory import AssistantTurn, Message, Step, Trajectory, estimate_tokens
from gym.harness.config import HarnessConfig
from gym.harness.context import ContextManager
from gym.harness.prompt import offered_tools, system_prompt
from gym.harness.toolbox import Toolbox
from gym.policies.base import CapsNewTokens, ContextLimitExceeded, CountsTokens, Policy, Summarizes
from gym.sandbox.base import Sandbox
from gym.tasks import Limits, Task, World

CUT_GRACE_S = 2.0  # how long a cut-short turn may take to hand back its partial text


def context_manager_for(policy: Policy, config: HarnessConfig) -> ContextManager:
    """Counter, window and summariser: the policy's own when it has them, else estimates and truncation."""
    settings = config.context
    counts = isinstance(policy, CountsTokens)
    counter = policy.count_tokens if counts else estimate_tokens
    window = settings.window or (policy.context_window if counts else None)
    budget = max(window - settings.reserve_tokens, 1) if window else None
    use_policy = settings.summarizer == "policy" or (
        settings.summarizer == "auto" and isinstance(policy, Summarizes)
    )
    summarize = policy.summarize if use_policy and isinstance(policy, Summarizes) else None
    return ContextManager(budget, counter, settings, summarize)


async def run_episode(
    sandbox: Sandbox,
    task: Task,
    world: World,
    policy: Policy,
    config: HarnessConfig | None = None,
    *,
    on_step: Callable[[Step], None] | None = None,
) -> Trajectory:
    """Run one episode of `task` in `sandbox` with `policy`; always returns a Trajectory.

    `on_step` sees each turn once its tool results are in (a live view); it cannot end the episode.
    """
    config = config or HarnessConfig()
    limits = config.limits_for(task)
    trajectory = Trajectory(
        task=task.key,
        policy=policy.name,
        model=getattr(policy, "model", None),
        started_at=time.time(),
        meta={"limits": limits.model_dump(), "faults": config.faults.model_dump(), "prompt": config.prompt},
    )
    new_tokens = config.level_limits(task).max_new_tokens
    if new_tokens is not None and isinstance(policy, CapsNewTokens):
        policy = policy.capped(new_tokens)
        trajectory.meta["limits"]["max_new_tokens"] = new_tokens
    started = time.monotonic()
    try:
        async with Toolbox.open(sandbox, task, config) as toolbox:
            trajectory.meta["tools"] = toolbox.names()
            # The schemas as the policy saw them: SFT data renders the prompt from them (gym.sft).
            trajectory.meta["tool_schemas"] = offered_tools(toolbox.schemas(), config.prompt)
            deadline = asyncio.timeout(limits.time_limit_s)
            try:
                async with deadline:
                    await _turns(toolbox, task, world, policy, config, limits, trajectory, _safe(on_step))
            except TimeoutError:
                if not deadline.expired():
                    raise
                trajectory.stop_reason = "time_limit"
            except ContextLimitExceeded as exc:
                trajectory.stop_reason, trajectory.error = "context_limit", str(exc)
            trajectory.meta["todos"] = [item.model_dump() for item in toolbox.env.todos]
            if toolbox.coworkers is not None:
                trajectory.meta["coworkers"] = toolbox.coworkers.log
                if toolbox.coworkers.model is not None:
                    trajectory.meta["coworker_model"] = toolbox.coworkers.model.describe()
    except Exception as exc:  # noqa: BLE001 - an episode that breaks is recorded, never raised to the batch
        message = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:2000]
        trajectory.meta["traceback"] = traceback.format_exc()[-4000:]
        if trajectory.stop_reason is None:
            trajectory.stop_reason, trajectory.error = "error", message
        else:  # the episode had ended; only shutting the tools down failed
            trajectory.meta["shutdown_error"] = message
    trajectory.seconds = round(time.monotonic() - started, 3)
    return trajectory


def _safe(on_step: Callable[[Step], None] | None) -> Callable[[Step], None]:
    def report(step: Step) -> None:
        if on_step is not None:
            with contextlib.suppress(Exception):  # a display problem must not end the episode
                on_step(step)

    return report


async def _turns(
    toolbox: Toolbox,
    task: Task,
    world: World,
    policy: Policy,
    config: HarnessConfig,
    limits: Limits,
    trajectory: Trajectory,
    on_step: Callable[[Step], None],
) -> None:
    context = [
        Message(role="system", content=system_prompt(task, world, config.prompt)),
        Message(role="user", content=task.prompt),
    ]
    trajectory.messages.extend(context)
    tools = offered_tools(toolbox.schemas(), config.prompt)
    manager = context_manager_for(policy, config)
    for index in range(limits.max_turns):
        fitted = await manager.fit(context, tools)
        context = list(fitted.messages)
        asked = time.monotonic()
        ask = asyncio.ensure_future(policy.next(list(context), tools))
        try:
            turn = await asyncio.shield(ask)
        except asyncio.CancelledError:  # the time limit hit while the model was writing: keep what it wrote
            partial = await _cut_short(ask)
            if partial is not None:
                trajectory.steps.append(
                    Step(
                        index=index,
                        turn=partial,
                        context_tokens=fitted.tokens,
                        policy_seconds=round(time.monotonic() - asked, 4),
                    )
                )
                _append(context, trajectory, partial.message())
            raise
        step = Step(
            index=index,
            turn=turn,
            policy_seconds=round(time.monotonic() - asked, 4),
            context_tokens=fitted.tokens,
            compacted=fitted.compacted,
        )
        trajectory.steps.append(step)
        _append(context, trajectory, turn.message())
        # A truncated turn (cut at max tokens) is never the answer: the model gets another turn.
        if not turn.tool_calls and not turn.truncated:
            trajectory.stop_reason, trajectory.final_answer = "answered", turn.content
            on_step(step)
            return
        try:
            for call in turn.tool_calls:
                result = await toolbox.call(call)
                step.results.append(result)
                step.tool_seconds = round(step.tool_seconds + result.seconds, 4)
                _append(
                    context,
                    trajectory,
                    Message(role="tool", content=result.output, tool_call_id=call.id, name=call.name),
                )
        finally:  # also when a limit cuts the turn short: report what it did
            on_step(step)
    trajectory.stop_reason = "turn_limit"


async def _cut_short(ask: asyncio.Future) -> AssistantTurn | None:
    """Cancel a turn in progress; a policy that can hands back what it wrote so far (marked truncated)."""
    ask.cancel()
    try:
        turn = await asyncio.wait_for(ask, CUT_GRACE_S)
    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - no partial turn, nothing to keep
        return None
    return turn.model_copy(update={"truncated": True})


def _append(context: list[Message], trajectory: Trajectory, message: Message) -> None:
    context.append(message)
    trajectory.messages.append(message)
