"""Small helpers shared by the page handlers."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request

from gym.dashboard.context import Context


def ctx(request: Request) -> Context:
    return request.app.state.ctx


def page_number(request: Request) -> int:
    """`?page=N` (from 1); anything else is page 1."""
    raw = request.query_params.get("page", "1")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def not_found(what: str) -> HTTPException:
    return HTTPException(status_code=404, detail=what)
