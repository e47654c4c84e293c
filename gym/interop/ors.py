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
import uuid
from collections.abc import AsyncIterator
from typing import Any

from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.errors import EgymError
from core.validation import describe_validation_error
from gym.episode import ToolSession
from gym.harness.builtin_tools import BUILTIN_TOOLS
from gym.interop.episodes import EnvironmentServer, EpisodeExists, InteropError
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


class OrsServer(EnvironmentServer):
    """The ORS environment `egym` over `tasks`; `app()` is the ASGI application."""

    label = f"ORS environment '{ENV_NAME}'"
    policy_name = "ors"
    how_to_open = "open it with POST /create first"

    def __init__(self, tasks: list[Task], **settings: Any) -> None:
        super().__init__(tasks, **settings)
        self.calls: dict[str, tuple[str, asyncio.Task[str]]] = {}  # call id -> (episode id, its run)

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
        handlers = {HTTPException: error_response, InteropError: error_response}
        return Starlette(routes=routes, lifespan=self._lifespan, exception_handlers=handlers)

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
        tasks = self.catalog.split(body.split)
        return JSONResponse({"tasks": [task_spec(t) for t in tasks], "env_name": env})

    async def num_tasks(self, request: Request) -> Response:
        _env(request)
        return JSONResponse({"num_tasks": len(self.catalog.split((await parse(request, SplitBody)).split))})

    async def task(self, request: Request) -> Response:
        _env(request)
        body = await parse(request, IndexBody)
        return JSONResponse({"task": task_spec(self.catalog.indexed(body.split, body.index))})

    async def task_range(self, request: Request) -> Response:
        _env(request)
        body = await parse(request, RangeBody)
        tasks = self.catalog.split(body.split)[body.start : body.stop]
        return JSONResponse({"tasks": [task_spec(t) for t in tasks]})

    def _task_of(self, body: CreateBody) -> Task:
        if body.task_spec is None:
            return self.catalog.indexed(body.split or "", body.index or 0)
        key = body.task_spec.get("id")
        if not isinstance(key, str):
            raise HTTPException(422, "task_spec has no 'id': pass a task as POST /egym/tasks lists it")
        return self.catalog.get(key)

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
        try:
            self.episodes.open(sid, task)
        except EpisodeExists:
            raise HTTPException(
                409, f"episode {sid!r} exists already; take a new id from POST /create_session"
            ) from None
        return JSONResponse({"sid": sid})

    async def delete(self, request: Request) -> Response:
        sid = _sid(request)
        await self.episodes.close(sid, f"episode {sid!r} was deleted")
        return JSONResponse({"sid": sid})

    async def ping(self, request: Request) -> Response:
        self.episodes.find(_sid(request))
        return JSONResponse({"status": "ok"})

    async def task_tools(self, request: Request) -> Response:
        session = await self.episodes.ready(_sid(request))
        return JSONResponse({"tools": [*map(tool_spec, session.tools), SUBMIT_TOOL]})

    async def prompt(self, request: Request) -> Response:
        """One text block: the harness's system prompt, then the task (both also in `detail`)."""
        messages = (await self.episodes.ready(_sid(request))).messages
        parts = {m.role: m.content for m in messages}
        text = "\n\n".join(m.content for m in messages)
        return JSONResponse([{"type": "text", "text": text, "detail": parts}])

    async def call(self, request: Request) -> Response:
        sid = _sid(request)
        session = await self.episodes.ready(sid)
        body = await parse(request, CallBody)
        if body.task_id is not None:
            if self.calls.get(body.task_id, ("", None))[0] != sid:
                raise HTTPException(404, f"unknown call {body.task_id!r} in episode {sid!r}")
            call_id = body.task_id
        else:  # the call runs on even if its client goes away: the harness records every turn
            call_id = uuid.uuid4().hex
            self.calls[call_id] = (sid, asyncio.create_task(self._run_call(sid, session, body)))
            self.calls[call_id][1].add_done_callback(lambda _: self._forget_later(call_id))
        return EventSourceResponse(call_events(call_id, self.calls[call_id][1]), ping=PING_S)

    async def _run_call(self, sid: str, session: ToolSession, body: CallBody) -> str:
        """The call's RunToolOutput: the tool's output or the grade, or the protocol's tool error."""
        try:
            with self.episodes.busy(sid):
                if body.name != SUBMIT_TOOL["name"]:
                    result = await session.call(body.name, body.input)
                    return run_tool_output(tool_output(result, session.turns_left))
                try:
                    answer = SubmitArgs.model_validate(body.input).answer
                except ValidationError as exc:  # refused, not a turn: the episode goes on
                    problem = describe_validation_error(exc, where="submit", model=SubmitArgs)
                    return run_tool_output(error=f'{problem}; submit takes {{"answer": "..."}}')
                grade = await session.submit(answer)
                stop_reason = session.trajectory.stop_reason if session.trajectory else None
                return run_tool_output(graded_output(grade, session.task, stop_reason))
        except EgymError as exc:  # the episode is over, or could not be graded: the client reads why
            return run_tool_output(error=str(exc))

    def _forget_later(self, call_id: str) -> None:
        """A finished call stays readable for a reconnecting client for a while, then goes."""
        asyncio.get_running_loop().call_later(self.episodes.idle_timeout_s, self.calls.pop, call_id, None)

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with self.episodes.running():
            yield


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
