"""What every page handler needs: the dashboard's settings and its read-only store, on `app.state.ctx`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.engine import make_url
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from gym.store import Store


class DashboardConfig(BaseModel):
    """What `egym serve` passes to the app."""

    model_config = ConfigDict(extra="forbid")

    store: str | None = Field(
        None, description="Run store URL or SQLite path (default: $EGYM_STORE, .egym/runs.db)."
    )
    tasks_dir: Path | None = Field(
        None,
        description="A folder of worlds (<world>/world.yaml), for the library, prompts and bands "
        "(default: every world, gym.worlds).",
    )
    metrics: list[Path] = Field(
        default_factory=lambda: [Path("runs")],
        description="Training metrics JSONL files, or folders searched for *.jsonl.",
    )
    per_page: int = Field(50, ge=1, le=1000, description="Rows per page in the run and rollout lists.")


@dataclass
class Context:
    """What every page handler needs, kept on `app.state.ctx`."""

    config: DashboardConfig
    store: Store
    templates: Jinja2Templates

    @property
    def store_label(self) -> str:
        """The store's URL without its password (shown in the page header)."""
        url = make_url(self.store.url)
        return (
            url.database or ""
            if url.get_backend_name() == "sqlite"
            else url.render_as_string(hide_password=True)
        )

    def render(self, request: Request, name: str, status_code: int = 200, **context: object) -> Response:
        return self.templates.TemplateResponse(request, name, context, status_code=status_code)
