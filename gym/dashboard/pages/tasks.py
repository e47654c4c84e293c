"""Tasks: every task seen in the store, and one task's band, history, item pass rates and prompt."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from core.errors import TaskError
from gym.dashboard import queries, svg
from gym.dashboard.pages.common import ctx, not_found, page_number
from gym.tasks import Task, load_task

CHART_ITEMS = 30  # the chart shows the most-failed items; the table below lists them all


def task_files(tasks_dir: Path, key: str) -> tuple[Task | None, str | None]:
    """The task's task.yaml when its folder exists under `tasks_dir`, else why not (shown on the page)."""
    world, _, task_id = key.partition("/")
    folder = tasks_dir / world / task_id
    if not task_id or ".." in key.split("/") or not (folder / "task.yaml").is_file():
        return None, f"no task folder {folder}"
    try:
        return load_task(folder), None
    except TaskError as exc:
        return None, str(exc)


def folder_tasks(tasks_dir: Path) -> dict[str, Task]:
    """Every valid task under `tasks_dir` (a broken task.yaml is `egym lint`'s business, not the dashboard's)."""
    found = {}
    for file in sorted(tasks_dir.glob("*/*/task.yaml")) if tasks_dir.is_dir() else []:
        try:
            task = load_task(file.parent)
        except TaskError:
            continue
        found[task.key] = task
    return found


def task_list(request: Request) -> Response:
    """Tasks with rollouts in the store, then the task folders' tasks that have none yet."""
    c = ctx(request)
    with c.store.session() as s:
        rows = queries.task_table(s)
    files = folder_tasks(c.config.tasks_dir)
    seen = {key for key, _ in rows}
    rows += [(key, queries.Stats()) for key in files if key not in seen]
    tasks = {key: files.get(key) for key, _ in rows}
    return c.render(request, "tasks.html", rows=rows, tasks=tasks)


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
