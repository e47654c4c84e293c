"""The dashboard's Starlette app: routes, templates, the read-only store connection.

`create_app(DashboardConfig(...))` builds the app; `egym serve` runs it with
uvicorn. Every route is a GET: the dashboard never writes to the store, and
its database connections are opened read-only as a second line of defence.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import event, inspect
from sqlalchemy.engine import make_url
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from core.errors import StoreError
from gym.dashboard import fmt
from gym.dashboard.context import Context, DashboardConfig
from gym.dashboard.pages import rollouts, runs, tasks, training
from gym.store import DEFAULT_PATH, Store, add_missing_columns

HERE = Path(__file__).parent


def _read_only(store: Store) -> None:
    """Make every connection of this (dashboard-private) engine refuse writes."""
    statement = {
        "sqlite": "PRAGMA query_only = ON",
        "postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    }.get(store.engine.dialect.name)
    if statement is None:
        return

    def on_connect(dbapi_conn, _record) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute(statement)
        cursor.close()
        if store.engine.dialect.name == "postgresql":
            dbapi_conn.commit()

    event.listen(store.engine, "connect", on_connect)


def _missing_sqlite_file(url: str | None) -> Path | None:
    """The SQLite file a URL or path names, when it does not exist (opening it would create it)."""
    url = url or os.environ.get("EGYM_STORE") or str(DEFAULT_PATH)
    if "://" not in url:
        path = Path(url).expanduser()
    elif url.startswith("sqlite:///") and make_url(url).database not in (None, "", ":memory:"):
        path = Path(make_url(url).database)
    else:
        return None
    return None if path.exists() else path


def open_store(url: str | None) -> Store:
    """The run store, read-only; a missing or empty store is a one-line StoreError."""
    missing = _missing_sqlite_file(url)
    if missing is not None:
        raise StoreError(f"no run store at {missing}: run `egym batch` first, or pass --store URL")
    store = Store(url, create=False)
    try:
        has_runs = inspect(store.engine).has_table("runs")
        if has_runs:  # a store from an older egym: its new nullable columns, before going read-only
            add_missing_columns(store.engine)
            store.engine.dispose()
        _read_only(store)
    except Exception as exc:  # noqa: BLE001 - the driver's own error type varies by backend
        store.close()
        raise StoreError(f"cannot open run store {store.url}: {exc}".splitlines()[0]) from None
    if not has_runs:
        store.close()
        raise StoreError(
            f"run store {store.url} holds no runs yet: run `egym batch` first, or pass --store URL"
        )
    return store


def templates() -> Jinja2Templates:
    tpl = Jinja2Templates(directory=HERE / "templates")
    tpl.env.filters.update(fmt.FILTERS)
    tpl.env.globals["fmt"] = fmt
    return tpl


async def not_found(request: Request, exc: Exception) -> Response:
    detail = exc.detail if isinstance(exc, HTTPException) else "Not found"
    ctx: Context = request.app.state.ctx
    return ctx.render(request, "404.html", status_code=404, detail=detail)


def home(request: Request) -> Response:
    return RedirectResponse(request.url_for("runs"), status_code=302)


ROUTES = [
    Route("/", home),
    Route("/runs", runs.run_list, name="runs"),
    Route("/runs/{run_id:path}", runs.run_detail, name="run"),
    Route("/tasks", tasks.task_list, name="tasks"),
    Route("/tasks/{key:path}", tasks.task_detail, name="task"),
    Route("/families/{key:path}", tasks.family_detail, name="family"),
    Route("/rollouts/{rollout_id}", rollouts.rollout_detail, name="rollout"),
    Route("/training", training.training_list, name="training"),
    Route("/training/{file_id}", training.training_detail, name="training_run"),
    Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
]


def create_app(config: DashboardConfig | None = None, *, store: Store | None = None) -> Starlette:
    """The ASGI app; pass `store` to reuse an open one (tests), else it is opened from the config."""
    config = config or DashboardConfig()
    store = store or open_store(config.store)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        store.close()

    app = Starlette(routes=ROUTES, exception_handlers={404: not_found}, lifespan=lifespan)
    app.state.ctx = Context(config, store, templates())
    return app
