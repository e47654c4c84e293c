"""Runs: the paged list, and one run with its score histogram, per-task table and rollouts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from gym.dashboard import queries, svg
from gym.dashboard.pages.common import ctx, not_found, page_number


def run_list(request: Request) -> Response:
    c = ctx(request)
    kind = request.query_params.get("kind") or None
    with c.store.session() as s:
        page = queries.run_page(s, page_number(request), c.config.per_page, kind=kind)
        kinds = queries.run_kinds(s)
    return c.render(request, "runs.html", page=page, kind=kind, kinds=kinds)


def run_detail(request: Request) -> Response:
    c = ctx(request)
    run_id = request.path_params["run_id"]
    with c.store.session() as s:
        summary = queries.run_summary(s, run_id)
        if summary is None:
            raise not_found(f"No run '{run_id}' in the run store.")
        counts, edges = queries.score_histogram(s, run_id=run_id)
        tasks = queries.task_table(s, run_id)
        families = queries.family_levels(s, run_id)
        status = request.query_params.get("status") or None
        step = request.query_params.get("step")
        step = int(step) if step and step.isdigit() else None
        rollouts = queries.rollout_page(
            s, page_number(request), c.config.per_page, run_id=run_id, status=status, step=step
        )
    chart = svg.histogram(counts, edges, title=f"Scores of run {run_id}", x_label="normalized score")
    return c.render(
        request,
        "run.html",
        summary=summary,
        run=summary.run,
        stats=summary.stats,
        histogram=chart,
        tasks=tasks,
        families=families,
        rollouts=rollouts,
        status=status,
        step=step,
    )
