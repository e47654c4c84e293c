"""egym as an OpenEnv environment: `egym serve-env --protocol openenv`.

OpenEnv (`openenv-core`) clients hold a WebSocket on `/ws` and send reset, step, state
and close; each connection is one environment session. Here a reset opens an egym
episode (its own container, through gym.interop.episodes.EpisodeTable, as ORS does) on
the task the reset names; steps are OpenEnv's MCP actions, `list_tools` and `call_tool`,
each call one harness turn; the tool `submit {answer}` ends the episode and grades it.

    reset(task="acme/product-price-l0-s3")    or reset(split="train", index=0) / reset(seed=7)
      -> observation: prompt (system prompt + task), tools; metadata: episode_id, turns_left
    step(CallToolAction(tool_name="db.query", arguments={"sql": ...}))
      -> observation: tool_name, result (the tool's output), metadata: is_error, turns_left
    step(CallToolAction(tool_name="submit", arguments={"answer": ...}))
      -> done, reward = the grade's normalised score (None if incomplete), metadata: the items

The call that uses the last turn, or any call after the time limit, ends the episode
too: done, graded as it stands, `truncated` in the metadata (`terminated` after submit).
Closing the WebSocket (or losing it) closes its episode and removes its container at
once. Clients without a connection use the same episodes over HTTP: POST /reset and
POST /step with an `episode_id`, or MCP JSON-RPC on POST /mcp (`openenv/session/create`,
`tools/list`, `tools/call`, `openenv/session/close`); those end by the idle timeout.
GET /health, /metadata, /schema and /state answer as OpenEnv's server does. The
payloads are in openenv_wire.py; gym/interop/openenv_client.py is the typed client.
"""

from __future__ import annotations

import contextlib
import json
import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from core.errors import EgymError
from core.validation import describe_validation_error
from gym.episode import SessionEnded, ToolSession
from gym.harness.builtin_tools import BUILTIN_TOOLS
from gym.interop.episodes import EnvironmentServer, InteropError
from gym.interop.openenv_wire import (
    RPC_INVALID_PARAMS,
    RPC_INVALID_REQUEST,
    RPC_NO_METHOD,
    RPC_SERVER_ERROR,
    CallToolAction,
    ListToolsAction,
    ResetBody,
    RpcFailure,
    RpcRequest,
    StepBody,
    SubmitArgs,
    WireError,
    action_of,
    error_code,
    graded,
    mcp_tools,
    message_of,
    reset_observation,
    rpc_error,
    rpc_result,
    schemas,
    state,
    submit_observation,
    tool_observation,
    tool_refused,
    tools_observation,
    validated,
    ws_error,
)
from gym.interop.ors_wire import SUBMIT_TOOL, error_response
from gym.tasks import Task

ENV_NAME = "egym"


@dataclass
class _Connection:
    """One WebSocket: the episode its last reset opened."""

    id: str
    episode_id: str | None = None
    resets: int = 0


class OpenEnvServer(EnvironmentServer):
    """The OpenEnv environment `egym` over `tasks`; `app()` is the ASGI application."""

    label = f"OpenEnv environment '{ENV_NAME}'"
    policy_name = "openenv"
    how_to_open = "open it with reset first"

    def __init__(self, tasks: list[Task], **settings: Any) -> None:
        super().__init__(tasks, **settings)
        self.common_tools = [spec.schema() for spec in BUILTIN_TOOLS.values()]  # before any reset
        self.random = random.Random()

    def app(self) -> Starlette:
        post = ["POST"]
        routes = [
            Route("/health", lambda _: JSONResponse({"status": "healthy"})),
            Route("/metadata", self.metadata),
            Route("/schema", lambda _: JSONResponse(schemas())),
            Route("/reset", self.http_reset, methods=post),
            Route("/step", self.http_step, methods=post),
            Route("/state", self.http_state),
            Route("/mcp", self.http_mcp, methods=post),
            WebSocketRoute("/ws", self.ws),
        ]
        handlers = {HTTPException: error_response, InteropError: error_response}
        return Starlette(routes=routes, lifespan=self._lifespan, exception_handlers=handlers)

    # -- episodes: what every transport does --------------------------------------------------------

    def task_for(self, body: ResetBody) -> Task:
        """The task a reset names: by key, by split and index, by seed, or (none of them) a random train task."""
        if body.task is not None:
            if body.split is not None or body.index is not None or body.seed is not None:
                raise WireError("reset: give task, or split with index or seed, not both")
            return self.catalog.get(body.task)
        split = body.split or "train"
        if body.index is not None:
            if body.seed is not None:
                raise WireError("reset: give index or seed, not both")
            return self.catalog.indexed(split, body.index)
        tasks = self.catalog.split(split)
        if not tasks:
            raise InteropError(f"split {split!r} has no tasks on this server; name one with task= or split=")
        pick = body.seed % len(tasks) if body.seed is not None else self.random.randrange(len(tasks))
        return tasks[pick]

    async def open(self, episode_id: str, task: Task) -> dict[str, Any]:
        """Open the episode and wait for its tools: the first observation."""
        self.episodes.open(episode_id, task)
        try:
            session = await self.episodes.ready(episode_id)
        except InteropError:
            with contextlib.suppress(InteropError):
                await self.episodes.close(episode_id, f"episode {episode_id!r} could not start")
            raise
        return reset_observation(episode_id, task, session.messages, session.tools, session.turns_left)

    async def step(self, episode_id: str, action: ListToolsAction | CallToolAction) -> dict[str, Any]:
        session = await self.episodes.ready(episode_id)
        if session.done:
            why = session.trajectory.stop_reason if session.trajectory else "closed"
            raise WireError(
                f"episode {episode_id!r} is over ({why}); reset to start another", "SESSION_ERROR", 410
            )
        with self.episodes.busy(episode_id):
            if isinstance(action, ListToolsAction):
                return tools_observation(session.tools)
            name = action.tool_name
            if name == SUBMIT_TOOL["name"]:
                try:
                    answer = SubmitArgs.model_validate(action.arguments).answer
                except ValidationError as exc:  # refused, not a turn: the episode goes on
                    problem = describe_validation_error(exc, where="submit", model=SubmitArgs)
                    return tool_refused(name, "invalid_args", f'{problem}; submit takes {{"answer": "..."}}')
                return await self._finish(session, submit_observation(), answer)
            try:
                result = await session.call(name, action.arguments)
            except SessionEnded as exc:  # a limit ended the episode before this call: graded as it stands
                kind = "timeout" if session.ended == "time_limit" else "execution_error"
                return await self._finish(session, tool_refused(name, kind, str(exc))["observation"], "")
            observation = tool_observation(name, result, session.turns_left)
            if session.turns_left == 0:  # that call was the last turn: the episode ends here
                return await self._finish(session, observation["observation"], "")
            return observation

    async def _finish(self, session: ToolSession, observation: dict[str, Any], answer: str) -> dict[str, Any]:
        """Grade the episode (its container is removed): the last observation, done, with the reward."""
        try:
            grade = await session.submit(answer)
        except EgymError as exc:
            raise InteropError(f"{session.task.key}: the episode could not be graded: {exc}") from None
        stop_reason = session.trajectory.stop_reason if session.trajectory else None
        return graded(observation, grade, session.task, stop_reason)

    def state_of(self, episode_id: str) -> dict[str, Any]:
        session = self.episodes.find(episode_id).session
        max_turns = session.harness.limits_for(session.task).max_turns
        stop_reason = session.trajectory.stop_reason if session.trajectory else None
        return state(
            episode_id,
            max_turns - session.turns_left,
            task_id=session.task.key,
            turns_left=session.turns_left,
            done=session.done,
            stop_reason=stop_reason if session.done else None,
        )

    # -- the WebSocket: one connection, one episode at a time ---------------------------------------

    async def ws(self, websocket: WebSocket) -> None:
        await websocket.accept()
        connection = _Connection(uuid.uuid4().hex[:12])
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text") or (message.get("bytes") or b"").decode(errors="replace")
                try:
                    kind, data = message_of(raw)
                    if kind == "close":
                        break
                    reply = await self._ws_message(connection, kind, data)
                except InteropError as exc:
                    reply = ws_error(str(exc), error_code(exc), exc.status)
                await websocket.send_text(json.dumps(reply))
        except (WebSocketDisconnect, OSError):  # gone mid-answer: the episode goes with it
            pass
        finally:
            if connection.episode_id in self.episodes.live:
                why = f"episode {connection.episode_id!r} was closed: its client disconnected"
                with contextlib.suppress(InteropError):
                    await self.episodes.close(connection.episode_id, why)
            if websocket.client_state == WebSocketState.CONNECTED:  # our close; theirs may cross it
                with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
                    await websocket.close()

    async def _ws_message(self, connection: _Connection, kind: str, data: Any) -> dict[str, Any]:
        if kind == "reset":
            body = validated(ResetBody, data, "reset")
            task = self.task_for(body)  # a bad reset leaves the episode held so far alone
            if connection.episode_id in self.episodes.live:  # Gymnasium: a reset starts a new episode
                why = f"episode {connection.episode_id!r} was closed by a new reset"
                await self.episodes.close(connection.episode_id, why)
            connection.resets += 1
            connection.episode_id = body.episode_id or f"ws-{connection.id}-{connection.resets}"
            return {"type": "observation", "data": await self.open(connection.episode_id, task)}
        if kind == "step":
            action = action_of(data)
            if connection.episode_id is None:
                if isinstance(action, ListToolsAction):  # OpenEnv: tools can be listed before a reset
                    return {"type": "observation", "data": tools_observation(self.common_tools)}
                raise WireError("step before reset: reset opens an episode first", "SESSION_ERROR", 400)
            return {"type": "observation", "data": await self.step(connection.episode_id, action)}
        if kind == "state":
            if connection.episode_id is None:
                return {"type": "state", "data": state(None, 0)}
            return {"type": "state", "data": self.state_of(connection.episode_id)}
        return {"type": "mcp", "data": await self.rpc(data, connection.episode_id)}

    # -- HTTP: the same episodes, named by episode_id -----------------------------------------------

    async def metadata(self, _request: Request) -> Response:
        splits = ", ".join(f"{len(tasks)} {split}" for split, tasks in self.catalog.by_split.items())
        return JSONResponse(
            {
                "name": ENV_NAME,
                "description": f"enterprise-gym: {len(self.catalog)} tasks ({splits}) in sandboxed companies; "
                "tools are the apps' and the built-ins, submit {answer} ends and grades an episode",
                "readme_content": None,
                "version": None,
                "author": None,
                "documentation_url": None,
            }
        )

    async def http_reset(self, request: Request) -> Response:
        body = validated(ResetBody, await _body(request, default={}), "reset")
        episode_id = body.episode_id or f"http-{uuid.uuid4().hex[:12]}"
        return JSONResponse(await self.open(episode_id, self.task_for(body)))

    async def http_step(self, request: Request) -> Response:
        body = validated(StepBody, await _body(request), "step")
        return JSONResponse(await self.step(body.episode_id, action_of(body.action)))

    async def http_state(self, request: Request) -> Response:
        episode_id = request.query_params.get("episode_id")
        return JSONResponse(self.state_of(episode_id) if episode_id else state(None, 0))

    async def http_mcp(self, request: Request) -> Response:
        try:
            payload = json.loads(await request.body())
        except ValueError as exc:
            return JSONResponse(rpc_error(None, -32700, f"Parse error: {exc}"))
        return JSONResponse(await self.rpc(payload, None))

    # -- MCP JSON-RPC: tools/list, tools/call and OpenEnv's session methods -------------------------

    async def rpc(self, payload: Any, held: str | None) -> dict[str, Any]:
        """A JSON-RPC answer; `held` is the WebSocket's episode (None over HTTP, where session_id names one)."""
        request_id = payload.get("id") if isinstance(payload, dict) else None
        try:
            request = RpcRequest.model_validate(payload)
        except ValidationError as exc:
            problem = describe_validation_error(exc, model=RpcRequest)
            return rpc_error(request_id, RPC_INVALID_REQUEST, f"Invalid request: {problem}")
        try:
            return rpc_result(request_id, await self._rpc_method(request.method, request.params, held))
        except RpcFailure as exc:
            return rpc_error(request_id, exc.code, str(exc))
        except InteropError as exc:
            code = RPC_SERVER_ERROR if exc.status >= 500 else RPC_INVALID_PARAMS
            return rpc_error(request_id, code, str(exc))

    async def _rpc_method(self, method: str, params: dict[str, Any], held: str | None) -> Any:
        episode_id = params.get("session_id") or held
        if method == "openenv/session/create":
            if held is not None:
                return {"session_id": held}
            body = validated(ResetBody, params, method)
            episode_id = body.episode_id or f"mcp-{uuid.uuid4().hex[:12]}"
            first = (await self.open(episode_id, self.task_for(body)))["observation"]
            return {"session_id": episode_id, "task_id": first["task"]["id"], "prompt": first["prompt"]}
        if method == "openenv/session/close":
            target = params.get("session_id")
            if not isinstance(target, str) or not target:
                raise RpcFailure(RPC_INVALID_PARAMS, "Invalid params - 'session_id' is required")
            if target == held:
                raise RpcFailure(
                    RPC_INVALID_REQUEST, "the WebSocket's own episode ends with its close message"
                )
            await self.episodes.close(target, f"episode {target!r} was closed by its client")
            return {"session_id": target, "closed": True}
        if method == "tools/list":
            if not episode_id:
                return {"tools": mcp_tools(self.common_tools)}
            listed = (await self.step(episode_id, ListToolsAction()))["observation"]["tools"]
            return {
                "tools": [
                    {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
                    for t in listed
                ]
            }
        if method == "tools/call":
            name = params.get("name")
            if not isinstance(name, str) or not name:
                raise RpcFailure(RPC_INVALID_PARAMS, "Missing 'name' in params")
            if not episode_id:
                raise RpcFailure(
                    RPC_INVALID_PARAMS, "tools/call needs an episode: openenv/session/create first"
                )
            call = validated(
                CallToolAction, {"tool_name": name, "arguments": params.get("arguments") or {}}, method
            )
            observation = (await self.step(episode_id, call))["observation"]
            if observation["error"] is not None:
                kind = observation["error"]["error_type"]
                raise RpcFailure(
                    RPC_INVALID_PARAMS if kind == "invalid_args" else RPC_SERVER_ERROR,
                    observation["error"]["message"],
                )
            return observation["result"]
        raise RpcFailure(RPC_NO_METHOD, f"Method not found: {method}")

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        async with self.episodes.running():
            yield


async def _body(request: Request, default: Any = None) -> Any:
    raw = await request.body()
    if not raw.strip() and default is not None:
        return default
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise WireError(f"{request.url.path}: invalid JSON: {exc}", "INVALID_JSON", 422) from None
