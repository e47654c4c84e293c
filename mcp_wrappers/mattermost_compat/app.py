"""The Starlette application: routes of every API module, Mattermost-shaped errors for the rest."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute

from mcp_wrappers.mattermost_compat import (
    api_channels,
    api_files,
    api_post_edits,
    api_posts,
    api_status,
    api_system,
    api_teams,
    api_threads,
    api_users,
    api_websocket,
    ids,
)
from mcp_wrappers.mattermost_compat.db import Database
from mcp_wrappers.mattermost_compat.errors import ApiError
from mcp_wrappers.mattermost_compat.events import Hub
from mcp_wrappers.mattermost_compat.web import error_response

DEFAULT_DSN = "dbname=chat user=chat host=/var/run/postgresql"


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        err = ApiError(
            404,
            "api.context.404.app_error",
            "Sorry, we could not find the page.",
            f"There doesn't appear to be an api call for the url='{request.url.path}'.",
        )
    elif status == 405:
        err = ApiError(
            405, "api.context.405.app_error", "Method not allowed.", f"{request.method} {request.url.path}"
        )
    else:
        err = ApiError(status, "api.context.server_error", "An internal error occurred.", type(exc).__name__)
    return error_response(err, ids.new_id())


def build_app(dsn: str = DEFAULT_DSN) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.db = await Database.connect(dsn)
        app.state.hub = Hub()
        try:
            yield
        finally:
            await app.state.db.close()

    routes: list[BaseRoute] = []
    modules = (
        api_system,
        api_users,
        api_status,
        api_teams,
        api_channels,
        api_posts,
        api_post_edits,
        api_threads,
        api_files,
        api_websocket,
    )
    for module in modules:
        routes += module.ROUTES
    return Starlette(
        routes=routes,
        middleware=[Middleware(api_system.VersionHeader)],
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )
