"""Request plumbing: the per-request context, bearer-token auth, JSON in and out, paging.

Every handler is `async def handler(ctx: Ctx) -> tuple[int, Any] | Response` and
is wrapped by `endpoint`, which opens the transaction, authenticates the token
and turns an ApiError into Mattermost's error body.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from mcp_wrappers.mattermost_compat import ids
from mcp_wrappers.mattermost_compat.db import Database, Row, Tx
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, unauthorized
from mcp_wrappers.mattermost_compat.events import Event

MAX_PER_PAGE = 200
MAX_PAYLOAD = 300_000  # Mattermost's ServiceSettings.MaximumPayloadSizeBytes default


@dataclass
class Ctx:
    request: Request
    tx: Tx
    user: Row | None
    session_id: str
    request_id: str
    events: list[Event] = field(default_factory=list)  # sent on the WebSocket once committed

    @property
    def me(self) -> Row:
        assert self.user is not None, "endpoint requires a session"
        return self.user

    @property
    def is_admin(self) -> bool:
        return self.user is not None and "system_admin" in self.user["roles"].split()

    def path(self, name: str) -> str:
        """A path parameter; ids must look like Mattermost ids ('me' stands for the session user)."""
        value = self.request.path_params[name]
        if name == "user_id" and value == "me" and self.user is not None:
            return self.user["id"]
        if name.endswith("_id") and not ids.is_id(value):
            raise bad_param(name, "url")
        return value

    def query(self, name: str, default: str = "") -> str:
        return self.request.query_params.get(name, default)

    def query_bool(self, name: str) -> bool:
        return self.query(name).lower() in ("1", "true", "yes")

    def query_int(self, name: str, default: int) -> int:
        raw = self.query(name)
        if not raw:
            return default
        try:
            return int(raw)
        except ValueError:
            raise bad_param(name, "url") from None

    def paging(self, default_per_page: int = 60) -> tuple[int, int]:
        """(limit, offset) from Mattermost's page/per_page query parameters."""
        # Mattermost reads a negative page as 0 and a per_page below 1 as the default, without an error.
        page = max(0, self.query_int("page", 0))
        per_page = self.query_int("per_page", default_per_page)
        per_page = min(MAX_PER_PAGE, per_page if per_page > 0 else default_per_page)
        return per_page, page * per_page

    async def json(self, kind: type = dict) -> Any:
        declared = self.request.headers.get("content-length", "")
        # refuse by the declared length before reading it all, as Mattermost's limited reader does
        raw = b"" if declared.isdigit() and int(declared) > MAX_PAYLOAD else await self.request.body()
        if len(raw) > MAX_PAYLOAD or (declared.isdigit() and int(declared) > MAX_PAYLOAD):
            raise ApiError(
                413,
                "api.context.request_body_too_large.app_error",
                "Unable to process request. Request body too large.",
            )
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            raise bad_param(kind.__name__ if kind is not dict else "body") from None
        if not isinstance(body, kind):
            raise ApiError(
                400,
                "api.context.invalid_body_param.app_error",
                f"Invalid request body: expected a JSON {'array' if kind is list else 'object'}.",
            )
        return body


Handler = Callable[[Ctx], Awaitable["tuple[int, Any] | Response"]]


def bearer_token(request: HTTPConnection) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() in ("bearer", "token") and value.strip():
        return value.strip()
    return request.cookies.get("MMAUTHTOKEN", "")


async def session_user(tx: Tx, token: str) -> tuple[Row | None, str]:
    if not token:
        return None, ""
    row = await tx.one(
        "SELECT u.*, t.id AS session_id FROM tokens t JOIN users u ON u.id = t.user_id "
        "WHERE t.digest = %s AND t.is_active AND u.delete_at = 0",
        ids.token_digest(token),
    )
    if row is None:
        return None, ""
    return row, row.pop("session_id")


def endpoint(handler: Handler, *, auth: bool = True) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        db: Database = request.app.state.db
        request_id = ids.new_id()
        try:
            async with db.transaction() as tx:
                user, session_id = await session_user(tx, bearer_token(request))
                if auth and user is None:
                    raise unauthorized()
                ctx = Ctx(request, tx, user, session_id, request_id)
                result = await handler(ctx)
        except ApiError as exc:
            return error_response(exc, request_id)
        for event in ctx.events:
            request.app.state.hub.publish(event)
        if isinstance(result, Response):
            return result
        status, body = result
        return JSONResponse(body, status_code=status, headers={"X-Request-Id": request_id})

    run.__name__ = handler.__name__
    return run


def error_response(exc: ApiError, request_id: str) -> JSONResponse:
    return JSONResponse(exc.body(request_id), status_code=exc.status, headers={"X-Request-Id": request_id})


def require_str(body: dict, name: str, *, optional: bool = False) -> str:
    value = body.get(name, "" if optional else None)
    if not isinstance(value, str) or (not optional and not value):
        raise bad_param(name)
    return value


def body_int(body: dict, name: str, default: int) -> int:
    value = body.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise bad_param(name)
    try:
        return int(value)
    except ValueError:
        raise bad_param(name) from None
