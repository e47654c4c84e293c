"""egym as a NeMo Gym resources server: `egym serve-env --protocol nemo-gym`.

NeMo Gym (`nemo-gym` on PyPI) runs rollouts as three servers: a model, an agent
(`simple_agent`: model call, tool calls, until a final message) and a resources server
(the environment: tools and a reward). Its agents call a resources server by HTTP, with
the session in a cookie they hand back on every call:
    POST /seed_session {row}            the row names its task in `egym_task`: the episode starts
    POST /<function> {arguments}        one tool call (`db__query` is egym's `db.query`): its output as text
    POST /verify {row, response}        the last assistant message is the answer: graded, episode closed,
                                        the body comes back with `reward` and `egym_grade`
    POST /aggregate_metrics             reward and pass rate over verify responses
    GET  /rows?split=train&agent=NAME   the tasks as dataset rows (JSONL) for `ng_collect_rollouts`
    GET  /                              liveness, as NeMo Gym's servers answer it
The payloads are in nemo_gym_wire.py. NeMo Gym's own server classes need Python 3.12 and
FastAPI; egym serves the same wire from its own process (the episodes' containers live here).

The reward is the grade's normalised score. NeMo Gym's verify response must carry a number,
so an incomplete grade (an item that could not be graded) is not answered with one: verify
is a 503 whose detail gives the points and whose `egym_grade` holds the items, never a 0
that a trainer would learn from. Protocol misuse (no session, an unknown task or episode, a
malformed body) is a 4xx with a one-line `detail`; what the agent gets wrong inside the
episode (an unknown tool, bad arguments, a call past the turn limit) is a tool output it
reads, as in the harness. An episode with no request for `idle_timeout_s` is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from core.trajectory import Message
from gym.episode import SessionEnded
from gym.harness.prompt import system_prompt
from gym.interop.episodes import EnvironmentServer, EpisodeGone, InteropError
from gym.interop.nemo_gym_wire import (
    AggregateBody,
    SeedBody,
    VerifyBody,
    aggregate_metrics,
    final_answer,
    row,
    tool_name,
    verify_answer,
)
from gym.interop.ors_wire import error_response, parse
from gym.tasks import Task, world_of

COOKIE = "egym_session"  # its value is the episode id (random, so not guessable)
VERIFIED_KEPT = 10_000  # verify answers kept for a retried verify


class NemoGymServer(EnvironmentServer):
    """A NeMo Gym resources server over `tasks`; `app()` is the ASGI application."""

    label = "NeMo Gym resources server"
    policy_name = "nemo-gym"
    how_to_open = "open it with POST /seed_session and send its cookie"

    def __init__(self, tasks: list[Task], **settings: Any) -> None:
        super().__init__(tasks, **settings)
        # episode id -> its verify (status, what the body gets): a retried or concurrent verify hears the same
        self.verified: dict[str, asyncio.Task[tuple[int, dict[str, Any]]]] = {}
        self.tools_by_apps: dict[tuple[str, ...], asyncio.Task[list[dict[str, Any]]]] = {}

    def app(self) -> Starlette:
        post = ["POST"]
        routes = [
            Route("/", lambda _: JSONResponse({"status": "ok"})),
            Route("/rows", self.rows),
            Route("/seed_session", self.seed_session, methods=post),
            Route("/verify", self.verify, methods=post),
            Route("/aggregate_metrics", self.aggregate, methods=post),
            Route("/{function}", self.call, methods=post),
        ]
        handlers = {HTTPException: error_response, InteropError: error_response}
        return Starlette(routes=routes, lifespan=self._lifespan, exception_handlers=handlers)

    async def rows(self, request: Request) -> Response:
        """The tasks (of `split`, or all) as NeMo Gym dataset rows, one JSON per line."""
        split = request.query_params.get("split")
        tasks = self.catalog.split(split) if split else list(self.catalog.by_key.values())
        agent = request.query_params.get("agent")
        lines = []
        for task in tasks:
            messages = [
                Message(role="system", content=system_prompt(task, world_of(task))),
                Message(role="user", content=task.prompt),
            ]
            lines.append(json.dumps(row(task, messages, await self._tools(task), agent)) + "\n")
        return Response("".join(lines), media_type="application/jsonl")

    async def _tools(self, task: Task) -> list[dict[str, Any]]:
        """The tools an episode of `task` has: listed by one episode per set of apps, once."""
        key = tuple(task.apps)
        if key not in self.tools_by_apps or self.tools_by_apps[key].cancelled():
            self.tools_by_apps[key] = asyncio.create_task(self._list_tools(task))
        listing = self.tools_by_apps[key]
        try:
            return await asyncio.shield(listing)
        except Exception:
            if self.tools_by_apps.get(key) is listing:
                del self.tools_by_apps[key]  # the next request tries again
            raise

    async def _list_tools(self, task: Task) -> list[dict[str, Any]]:
        probe = f"tools-{uuid.uuid4().hex[:12]}"
        self.episodes.open(probe, task)
        try:
            return (await self.episodes.ready(probe)).tools
        finally:
            await self.episodes.close(probe, "it listed the tools")

    async def seed_session(self, request: Request) -> Response:
        """Open an episode of the row's task (its container starts in the background): a fresh session."""
        body = await parse(request, SeedBody)
        task = self.catalog.get(body.egym_task)
        sid = uuid.uuid4().hex  # a new episode even when the client sends an old cookie
        self.episodes.open(sid, task)
        return _with_session(JSONResponse({}), sid)

    async def call(self, request: Request) -> Response:
        """One tool call: its output as text (the agent's mistakes included, as the harness gives them)."""
        sid = _sid(request)
        session = await self.episodes.ready(sid)
        try:
            arguments = await request.json()
        except ValueError:
            raise HTTPException(422, f"{request.url.path}: the body is not JSON") from None
        if not isinstance(arguments, dict):
            raise HTTPException(422, f"{request.url.path}: the arguments must be a JSON object")
        with self.episodes.busy(sid):
            try:
                output = (await session.call(tool_name(request.path_params["function"]), arguments)).output
            except SessionEnded as exc:  # past a limit, or verified: the agent reads why
                output = f"Error: {exc}"
        return _with_session(PlainTextResponse(output), sid)

    async def verify(self, request: Request) -> Response:
        """Grade the episode with the response's final answer, close it, and answer the body with its reward."""
        sid, body = _sid(request), await parse(request, VerifyBody)
        grading = self.verified.get(sid)
        if grading is None:  # a task of its own: a client that goes away does not stop the grading
            grading = self.verified[sid] = asyncio.create_task(self._grade(sid, body))
            grading.add_done_callback(lambda t: self._forget_refused(sid, t))
            while len(self.verified) > VERIFIED_KEPT:
                del self.verified[next(iter(self.verified))]
        status, extra = await asyncio.shield(grading)
        answer = body.model_dump() | extra if status == 200 else extra
        return _with_session(JSONResponse(answer, status_code=status), sid)

    def _forget_refused(self, sid: str, grading: asyncio.Task[Any]) -> None:
        """A refused verify (no such episode, another task) is not an answer to keep."""
        if (grading.cancelled() or grading.exception() is not None) and self.verified.get(sid) is grading:
            del self.verified[sid]

    async def _grade(self, sid: str, body: VerifyBody) -> tuple[int, dict[str, Any]]:
        session = await self.episodes.ready(sid)
        if body.egym_task is not None and body.egym_task != session.task.key:
            raise InteropError(f"this session's episode is {session.task.key!r}, not {body.egym_task!r}")
        with self.episodes.busy(sid):
            try:
                grade = await session.submit(final_answer(body.response))
            except SessionEnded as exc:
                raise EpisodeGone(str(exc)) from None
        await self.episodes.close(sid, f"episode {sid!r} was verified")
        stop_reason = session.trajectory.stop_reason if session.trajectory else None
        return verify_answer(grade, session.task, stop_reason)

    async def aggregate(self, request: Request) -> Response:
        body = await parse(request, AggregateBody)
        return JSONResponse(aggregate_metrics(body.verify_responses))

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with self.episodes.running():
            try:
                yield
            finally:
                for listing in self.tools_by_apps.values():
                    listing.cancel()


def _sid(request: Request) -> str:
    sid = request.cookies.get(COOKIE, "").strip()
    if not sid:
        raise HTTPException(400, f"no session: call POST /seed_session first and send its {COOKIE!r} cookie")
    return sid


def _with_session(response: Response, sid: str) -> Response:
    """Every answer sets the cookie again: NeMo Gym's agents pass on only the last answer's cookies."""
    response.set_cookie(COOKIE, sid, httponly=True, samesite="lax")
    return response
