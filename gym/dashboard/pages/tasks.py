"""Tasks: the library's family levels and tasks, one family's instances, and one task's bands, history,
item pass rates and prompt."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from core.errors import TaskError
from gym.dashboard import library, queries, svg
from gym.dashboard.pages.common import ctx, not_found, page_number
from gym.families import families, family_level, materialize
from gym.tasks import Task, load_task

CHART_ITEMS = 30  # the chart shows the most-failed items; the table below lists them all


def task_files(tasks_dir: Path | None, key: str) -> tuple[Task | None, str | None]:
    """The task's task.yaml when its folder exists in its world, or the family instance it names
    generated from its family there, else why not (shown on the page)."""
    world, _, task_id = key.partition("/")
    world_dir = library.world_folders(tasks_dir).get(world)
    if world_dir is None:
        return None, f"no world '{world}'"
    folder = world_dir / task_id
    if (at := family_level(key)) and (world_dir / "families").is_dir():
        try:
            family = families(world_dir).get(at[0].partition("/")[2])
            if family is not None:
                return materialize(family, at[1], int(task_id.rsplit("-s", 1)[1])), None
        except TaskError as exc:
            return None, str(exc)
    if not task_id or ".." in key.split("/") or not (folder / "task.yaml").is_file():
        return None, f"no task folder {folder}"
    try:
        return load_task(folder), None
    except TaskError as exc:
        return None, str(exc)


def _where(tasks_dir: Path | None) -> str:
    return str(tasks_dir) if tasks_dir is not None else "the installed worlds or ./tasks"


def task_list(request: Request) -> Response:
    """The library's family levels and tasks (and those only the store knows), filtered by the query."""
    c = ctx(request)
    with c.store.session() as s:
        counts = queries.pass_counts(s)
    rows = library.rows(c.config.tasks_dir, counts)
    filters = library.Filters.of(request.query_params)
    shown = [row for row in rows if filters.keeps(row)]
    return c.render(
        request,
        "tasks.html",
        rows=shown,
        total=len(rows),
        filters=filters,
        options=library.Options.of(rows),
        bands=library.BANDS,
        policies=library.policies(shown),
    )


def family_detail(request: Request) -> Response:
    """A family's levels (bands, figures per policy) and its instances, linked to their rollouts."""
    c = ctx(request)
    key = request.path_params["key"]
    family = library.library_families(c.config.tasks_dir).get(key)
    with c.store.session() as s:
        counts = queries.pass_counts(s, family=key)
    if family is None and not counts:
        raise not_found(
            f"No family '{key}': none in {_where(c.config.tasks_dir)}, and no rollouts of its instances."
        )
    levels = [row for row in library.rows(c.config.tasks_dir, counts) if row.is_family and row.key == key]
    by_level = library.instances(family, key, counts)
    return c.render(
        request,
        "family.html",
        key=key,
        family=family,
        levels=levels,
        instances=by_level,
        policies=library.policies(levels),
    )


def task_detail(request: Request) -> Response:
    c = ctx(request)
    key = request.path_params["key"]
    run_id = request.query_params.get("run") or None
    task, missing = task_files(c.config.tasks_dir, key)
    with c.store.session() as s:
        if task is None and not queries.task_exists(s, key):
            raise not_found(f"No task '{key}': no rollouts in the run store, and {missing}.")
        history = queries.task_history(s, key)
        rates = queries.item_rates(s, key, run_id)
        runs = queries.runs_of_task(s, key)
        counts, edges = queries.score_histogram(s, task=key, run_id=run_id)
        rollouts = queries.rollout_page(s, page_number(request), c.config.per_page, task=key, run_id=run_id)
    return c.render(
        request,
        "task.html",
        key=key,
        family=family_level(key),
        task=task,
        missing=missing,
        run_id=run_id,
        runs=runs,
        history=history,
        rates=rates,
        rollouts=rollouts,
        history_chart=_history_chart(key, history),
        items_chart=_items_chart(key, rates, run_id),
        histogram=svg.histogram(counts, edges, title=f"Scores of {key}", x_label="normalized score"),
    )


def _history_chart(key: str, history: list[queries.HistoryPoint]):
    points = []
    for index, h in enumerate(history, start=1):
        cal = h.stats.calibration
        if cal.pass_rate is not None:
            label = f"run {h.run_id} ({h.policy}) {cal.passes}/{cal.n}"
            points.append(svg.Point(index, cal.pass_rate, cal.low, cal.high, label=label))
    return svg.line_chart(
        [svg.Series("pass rate", points)],
        title=f"Pass rate of {key} per run (Wilson 95%)",
        x_label="run (oldest first)",
        y_label="pass rate",
        band=False,
    )


def _items_chart(key: str, rates: list[queries.ItemRate], run_id: str | None):
    bars = [svg.Bar(r.item_id, r.pass_rate, note=f"{r.passed}/{r.graded}") for r in rates[:CHART_ITEMS]]
    scope = f" in run {run_id}" if run_id else ""
    return svg.bar_chart(bars, title=f"Item pass rates of {key}{scope}, most failed first")
