"""The Open Reward Standard (ORS) over egym episodes: `egym serve-env --protocol ors`.

ORS is HTTP plus server-sent events: an environment lists splits and tasks; a client
opens an episode (a "session") on a task, lists and calls its tools, and a `submit`
tool returns the reward. Here one environment, `egym`, serves the tasks given on the
command line under their egym split (`val` has the ORS type `validation`). Each
episode is a gym.episode.ToolSession: its own container, the harness's limits, faults
and trajectory; `submit` ends it and grades it with the task's rubric.

The endpoints and payloads are those of the official client and server (`ors-sdk`):
    GET  /health, /list_environments      POST /create_session, /delete_session, /ping
    GET  /egym/splits, /egym/tools        POST /egym/tasks, /egym/num_tasks, /egym/task, /egym/task_range
    POST /create, /delete                 GET  /egym/prompt, /egym/task_tools    POST /egym/call (SSE)
(episode requests carry the `X-Session-ID` header; the payloads are in ors_wire.py).

The reward is the grade's normalised score; the metadata holds the points, the items
and `incomplete`. An incomplete grade (an item that could not be graded) has reward
null, never 0. Protocol misuse (an unknown task or episode, a bad split or index) is a
4xx with a one-line `detail`; what the agent gets wrong inside the episode (an unknown
tool, bad arguments) is a tool result it reads, as in the harness. An episode with no
request (client pings included) for `idle_timeout_s` is closed and its container removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.errors import EgymError
from core.validation import closest, describe_validation_error
from grader.judge import JudgeOptions
from gym.episode import ToolSession
from gym.harness.builtin_tools import BUILTIN_TOOLS
from gym.harness.config import HarnessConfig
from gym.interop.ors_wire import (
    SPLIT_TYPES,
    SUBMIT_TOOL,
    CallBody,
    CreateBody,
    IndexBody,
    RangeBody,
    SplitBody,
    SubmitArgs,
    call_events,
    error_response,
    graded_output,
    parse,
    run_tool_output,
    task_spec,
    tool_output,
    tool_spec,
)
from gym.tasks import Task

ENV_NAME = "egym"
PING_S = 10  # SSE comments while a call runs: the client gives up on a silent stream after 30 s
GONE_KEPT = 10_000  # ended episodes remembered, so a late request hears why (410) rather than 404
log = logging.getLogger(__name__)


@dataclass
class _Live:
    """One episode the server holds, from POST /create to its removal."""

    session: ToolSession
    starting: asyncio.Task[None]
    seen: float = field(default_factory=time.monotonic)
    busy: int = 0  # requests or calls in progress: never idle while one runs
    calls: dict[str, asyncio.Task[str]] = field(default_factory=dict)


class OrsServer:
    """The ORS environment `egym` over `tasks`; `app()` is the ASGI application."""

    def __init__(
        self,
        tasks: list[Task],
        *,
        run_id: str,
        harness: HarnessConfig | None = None,
        judge_options: JudgeOptions | None = None,
        idle_timeout_s: float = 300.0,
        max_episodes: int = 32,
    ) -> None:
        self.tasks = {task.key: task for task in tasks}
        self.by_split = {split: [t for t in tasks if t.split == split] for split in SPLIT_TYPES}
        self.run_id, self.harness, self.judge_options = run_id, harness, judge_options
        self.idle_timeout_s, self.max_episodes = idle_timeout_s, max_episodes
        self.live: dict[str, _Live] = {}
        self.gone: dict[str, str] = {}  # episode id -> why it ended

    def app(self) -> Starlette:
        post = ["POST"]
        routes = [
            Route("/health", lambda _: JSONResponse({"status": "ok"})),
            Route("/list_environments", lambda _: JSONResponse([ENV_NAME])),
            Route("/create_session", self.create_session, methods=post),
            Route("/delete_session", lambda r: JSONResponse({"sid": _sid(r)}), methods=post),
            Route("/ping", self.ping, methods=post),
            Route("/create", self.create, methods=post),
            Route("/delete", self.delete, methods=post),
            Route("/{env}/splits", self.splits),
            Route("/{env}/tools", self.tools),
            Route("/{env}/tasks", self.list_tasks, methods=post),
            Route("/{env}/num_tasks", self.num_tasks, methods=post),
            Route("/{env}/task", self.task, methods=post),
            Route("/{env}/task_range", self.task_range, methods=post),
            Route("/{env}/task_tools", self.task_tools),
            Route("/{env}/prompt", self.prompt),
            Route("/{env}/call", self.call, methods=post),
        ]
        return Starlette(
            routes=routes, lifespan=self._lifespan, exception_handlers={HTTPException: error_response}
        )

    # -- the environment: splits, tasks, tools ------------------------------------------------------

    async def splits(self, request: Request) -> Response:
        _env(request)
        return JSONResponse([{"name": name, "type": kind} for name, kind in SPLIT_TYPES.items()])

    async def tools(self, request: Request) -> Response:
        """The tools every episode has (its apps' tools come with the episode: /task_tools)."""
        _env(request)
        return JSONResponse(
            {"tools": [*map(tool_spec, (s.schema() for s in BUILTIN_TOOLS.values())), SUBMIT_TOOL]}
        )

    async def list_tasks(self, request: Request) -> Response:
        env, body = _env(request), await parse(request, SplitBody)
        return JSONResponse({"tasks": [task_spec(t) for t in self._split(body.split)], "env_name": env})

    async def num_tasks(self, request: Request) -> Response:
        _env(request)
        return JSONResponse({"num_tasks": len(self._split((await parse(request, SplitBody)).split))})

    async def task(self, request: Request) -> Response:
        _env(request)
        body = await parse(request, IndexBody)
        return JSONResponse({"task": task_spec(self._indexed(body.split, body.index))})

    async def task_range(self, request: Request) -> Response:
        _env(request)
        body = await parse(request, RangeBody)
        return JSONResponse(
            {"tasks": [task_spec(t) for t in self._split(body.split)[body.start : body.stop]]}
        )

    def _split(self, split: str) -> list[Task]:
        if split not in self.by_split:
            raise HTTPException(400, f"unknown split {split!r}; the splits are {', '.join(SPLIT_TYPES)}")
        return self.by_split[split]

    def _indexed(self, split: str, index: int) -> Task:
        tasks = self._split(split)
        if not 0 <= index < len(tasks):
            raise HTTPException(400, f"index {index} is out of range: split {split!r} has {len(tasks)} tasks")
        return tasks[index]

    def _task_of(self, body: CreateBody) -> Task:
        if body.task_spec is None:
            return self._indexed(body.split or "", body.index or 0)
        key = body.task_spec.get("id")
        if not isinstance(key, str):
            raise HTTPException(422, "task_spec has no 'id': pass a task as POST /egym/tasks lists it")
        if key not in self.tasks:
            hint = closest(key, self.tasks, list_known=len(self.tasks) <= 10)
            raise HTTPException(
                404, f"unknown task {key!r}: this server serves {len(self.tasks)} tasks{hint}"
            )
        return self.tasks[key]

    # -- episodes -----------------------------------------------------------------------------------

    async def create_session(self, request: Request) -> Response:
        """A fresh episode id, as an SSE stream (how the official server hands it out)."""

        async def events() -> AsyncIterator[dict[str, str]]:
            yield {"event": "task_id", "data": uuid.uuid4().hex}
            yield {"event": "end", "data": ""}

        return EventSourceResponse(events())

    async def create(self, request: Request) -> Response:
        """Start the episode's container in the background; its first request waits until it is up."""
        sid, body = _sid(request), await parse(request, CreateBody)
        if body.env_name is not None and body.env_name.lower() != ENV_NAME:
            raise HTTPException(404, f"unknown environment {body.env_name!r}; this server has {ENV_NAME!r}")
        task = self._task_of(body)
        if sid in self.live or sid in self.gone:
            raise HTTPException(
                409, f"episode {sid!r} exists already; take a new id from POST /create_session"
            )
        if sum(not live.session.done for live in self.live.values()) >= self.max_episodes:
            raise HTTPException(
                503, f"this server runs its maximum of {self.max_episodes} episodes; retry later"
            )
        session = ToolSession(
            task,
            run_id=self.run_id,
            rollout_id=sid,
            harness=self.harness,
            judge_options=self.judge_options,
            policy_name="ors",
        )
        starting = asyncio.create_task(session.start())
        starting.add_done_callback(lambda t: t.cancelled() or t.exception())  # read here, reported on use
        self.live[sid] = _Live(session, starting)
        return JSONResponse({"sid": sid})

    async def delete(self, request: Request) -> Response:
        sid = _sid(request)
        live = self.live.pop(sid, None)
        if live is None and sid not in self.gone:
            raise HTTPException(404, f"unknown episode {sid!r}")
        if live is not None:
            await self._close(sid, live, f"episode {sid!r} was deleted")
        return JSONResponse({"sid": sid})

    async def ping(self, request: Request) -> Response:
        self._find(_sid(request))
        return JSONResponse({"status": "ok"})

    async def task_tools(self, request: Request) -> Response:
        live = await self._ready(request)
        return JSONResponse({"tools": [*map(tool_spec, live.session.tools), SUBMIT_TOOL]})

    async def prompt(self, request: Request) -> Response:
        """One text block: the harness's system prompt, then the task (both also in `detail`)."""
        messages = (await self._ready(request)).session.messages
        parts = {m.role: m.content for m in messages}
        text = "\n\n".join(m.content for m in messages)
        return JSONResponse([{"type": "text", "text": text, "detail": parts}])

    async def call(self, request: Request) -> Response:
        live = await self._ready(request)
        body = await parse(request, CallBody)
        if body.task_id is not None:
            if body.task_id not in live.calls:
                raise HTTPException(404, f"unknown call {body.task_id!r} in episode {_sid(request)!r}")
            call_id = body.task_id
        else:  # the call runs on even if its client goes away: the harness records every turn
            call_id = uuid.uuid4().hex
            live.calls[call_id] = asyncio.create_task(self._run_call(live, body.name, body.input))
            live.busy += 1
            live.calls[call_id].add_done_callback(lambda _: _settle(live))
        return EventSourceResponse(call_events(call_id, live.calls[call_id]), ping=PING_S)

    async def _run_call(self, live: _Live, name: str, arguments: dict[str, Any]) -> str:
        """The call's RunToolOutput: the tool's output or the grade, or the protocol's tool error."""
        session = live.session
        try:
            if name != SUBMIT_TOOL["name"]:
                result = await session.call(name, arguments)
                return run_tool_output(tool_output(result, session.turns_left))
            try:
                answer = SubmitArgs.model_validate(arguments).answer
            except ValidationError as exc:  # refused, not a turn: the episode goes on
                problem = describe_validation_error(exc, where="submit", model=SubmitArgs)
                return run_tool_output(error=f'{problem}; submit takes {{"answer": "..."}}')
            grade = await session.submit(answer)
            stop_reason = session.trajectory.stop_reason if session.trajectory else None
            return run_tool_output(graded_output(grade, session.task, stop_reason))
        except EgymError as exc:  # the episode is over, or could not be graded: the client reads why
            return run_tool_output(error=str(exc))

    def _find(self, sid: str) -> _Live:
        live = self.live.get(sid)
        if live is None:
            if sid in self.gone:
                raise HTTPException(410, self.gone[sid])
            raise HTTPException(404, f"unknown episode {sid!r}: open it with POST /create first")
        live.seen = time.monotonic()
        return live

    async def _ready(self, request: Request) -> _Live:
        """The episode, once its container and tools are up; 503 with the reason when they failed."""
        sid = _sid(request)
        live = self._find(sid)
        live.busy += 1
        try:
            await asyncio.wait({live.starting})
        finally:
            _settle(live)
        if live.starting.cancelled():
            self._find(sid)  # 410: it was deleted or closed while starting
            raise HTTPException(410, f"episode {sid!r} was closed while it started")
        if (exc := live.starting.exception()) is not None:
            raise HTTPException(503, f"episode {sid!r} could not start: {exc}".replace("\n", " "))
        return live

    async def _close(self, sid: str, live: _Live, why: str) -> None:
        self.gone[sid] = why
        while len(self.gone) > GONE_KEPT:
            del self.gone[next(iter(self.gone))]
        live.starting.cancel()
        await asyncio.wait({live.starting})
        await live.session.close()  # the container is removed here

    async def _reap(self) -> None:
        """Close episodes that saw no request for idle_timeout_s (their clients are gone)."""
        while True:
            await asyncio.sleep(min(5.0, self.idle_timeout_s / 4))
            now = time.monotonic()
            for sid, live in list(self.live.items()):
                idle = live.busy == 0 and live.starting.done() and now - live.seen > self.idle_timeout_s
                if idle and self.live.get(sid) is live:
                    del self.live[sid]
                    why = f"episode {sid!r} was closed after {self.idle_timeout_s:g} s without a request"
                    try:
                        await self._close(sid, live, why)
                    except Exception:  # one bad close must not stop the reaping
                        log.exception("closing idle episode %s", sid)

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        reaper = asyncio.create_task(self._reap())
        try:
            yield
        finally:
            reaper.cancel()
            held, self.live = self.live, {}
            await asyncio.gather(
                *(self._close(sid, live, "the server stopped") for sid, live in held.items())
            )


def _settle(live: _Live) -> None:
    live.busy -= 1
    live.seen = time.monotonic()


def _env(request: Request) -> str:
    name = request.path_params["env"]
    if name.lower() != ENV_NAME:
        raise HTTPException(404, f"unknown environment {name!r}; this server has {ENV_NAME!r}")
    return ENV_NAME


def _sid(request: Request) -> str:
    sid = request.headers.get("X-Session-ID", "").strip()
    if not sid:
        raise HTTPException(400, "the X-Session-ID header is required")
    return sid
