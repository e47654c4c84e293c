"""`egym runs`: the list of runs, and one run's per-task scores and rollouts."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gym.batch import paired
from gym.batch.report import family_scores, family_table, fmt_points, score_table, task_scores
from gym.store import RunRow, Store

STATUS_STYLE = {
    "done": "green",
    "failed": "red",
    "running": "cyan",
    "pending": "dim",
    "interrupted": "yellow",
}


def _styled(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status}[/]"


def run_summary(store: Store, run: RunRow) -> dict[str, Any]:
    """One run and its counts: a row of `egym runs`, and its `--json` record."""
    stats = store.run_stats(run.id)
    return {
        "run": run.id,
        "kind": run.kind,
        "created": run.created_at,
        "policy": run.policy,
        "model": run.model,
        "tasks": len(run.tasks),
        "rollouts": stats["total"],
        "done": stats["done"],
        "failed": stats["failed"],
        "mean": stats["mean_reward"],
        "pass_rate": stats["pass_rate"],
        "status": run.status,
    }


def runs_table(summaries: list[dict[str, Any]]) -> Table:
    table = Table(title="runs (newest first)", title_justify="left")
    for name in (
        "run",
        "kind",
        "created",
        "policy",
        "model",
        "tasks",
        "rollouts",
        "done",
        "failed",
        "mean",
        "pass",
        "status",
    ):
        table.add_column(
            name, justify="right" if name in ("rollouts", "done", "failed", "mean", "pass") else "left"
        )
    for run in summaries:
        table.add_row(
            run["run"],
            run["kind"],
            f"{run['created']:%Y-%m-%d %H:%M}",
            run["policy"],
            run["model"] or "",
            str(run["tasks"]),
            str(run["rollouts"]),
            str(run["done"]),
            str(run["failed"]),
            f"{run['mean']:.3f}" if run["mean"] is not None else "-",
            f"{run['pass_rate']:.0%}" if run["pass_rate"] is not None else "-",
            _styled(run["status"]),
        )
    return table


def run_record(store: Store, run_id: str) -> dict[str, Any]:
    """`egym runs RUN --json`: the run, its per-task and per-family scores, and its rollouts."""
    rows = store.list_rollouts(run_id)
    rollout_fields = ("id", "task", "sample", "status", "earned", "possible", "reward", "passed")
    rollout_fields += ("incomplete", "stop_reason", "turns", "seconds", "error")
    return {
        **run_summary(store, store.get_run(run_id)),
        "scores": task_scores(rows),
        "families": family_scores(rows),
        "rollouts": [{name: getattr(row, name) for name in rollout_fields} for row in rows],
    }


def compare_record(store: Store, run_ids: list[str]) -> dict[str, Any]:
    """`egym runs RUN1 RUN2 --json`: the runs, each task's scores per run (null where a run lacks it)
    and, for two runs, the second against the first episode by episode (`gym.batch.paired`)."""
    per_run = {run_id: {s.task: s for s in task_scores(store.list_rollouts(run_id))} for run_id in run_ids}
    tasks = sorted({t for scores in per_run.values() for t in scores})
    return {
        "runs": [run_summary(store, store.get_run(run_id)) for run_id in run_ids],
        "tasks": [{"task": t, "scores": {r: per_run[r].get(t) for r in run_ids}} for t in tasks],
        "paired": _paired(store, run_ids),
    }


def _paired(store: Store, run_ids: list[str]) -> paired.Paired | None:
    if len(run_ids) != 2:
        return None
    a, b = (paired.outcomes(store.list_rollouts(run_id)) for run_id in run_ids)
    return paired.compare(a, b)


def run_detail(store: Store, run_id: str, *, limit: int = 200) -> RenderableType:
    run = store.get_run(run_id)
    rows = store.list_rollouts(run_id)
    table = Table(
        title=f"rollouts of {run_id} (first {min(limit, len(rows))} of {len(rows)})", title_justify="left"
    )
    for name in ("rollout", "task", "sample", "status", "score", "stop", "turns", "seconds", "error"):
        table.add_column(name, overflow="fold")
    for row in rows[:limit]:
        score = f"{fmt_points(row.earned)}/{row.possible}" if row.possible is not None else "-"
        table.add_row(
            row.id,
            row.task,
            str(row.sample),
            _styled(row.status),
            score + (" [yellow]incomplete[/]" if row.incomplete else ""),
            row.stop_reason or "",
            str(row.turns if row.turns is not None else ""),
            f"{row.seconds:.1f}" if row.seconds is not None else "",
            (row.error or "")[:120],
        )
    title = f"run {run.id}: {run.kind}, policy {run.policy}{f' model {run.model}' if run.model else ''}, {run.status}"
    families = family_table(rows)
    return Group(score_table(rows, title=title), *([families] if families is not None else []), table)


def compare_table(store: Store, run_ids: list[str]) -> RenderableType:
    """Tasks down, runs across: each cell the mean score like '183/183' and the pass rate; for two
    runs, a line comparing them episode by episode with the interval of the difference."""
    per_run = {run_id: {s.task: s for s in task_scores(store.list_rollouts(run_id))} for run_id in run_ids}
    runs = {run_id: store.get_run(run_id) for run_id in run_ids}
    table = Table(title="scores by task", title_justify="left")
    table.add_column("task")
    for run_id in run_ids:
        table.add_column(
            f"{run_id}\n{runs[run_id].policy}{f' {runs[run_id].model}' if runs[run_id].model else ''}",
            justify="right",
        )
    for task in sorted({t for scores in per_run.values() for t in scores}):
        cells = []
        for run_id in run_ids:
            s = per_run[run_id].get(task)
            if s is None or s.mean is None:
                cells.append("-" if s is None else f"[red]{s.failed} failed[/]")
            else:
                cell = f"{s.score} ({s.mean:.0%})" + (f" [red]{s.failed} failed[/]" if s.failed else "")
                cells.append(cell + (" [yellow]incomplete[/]" if s.incomplete else ""))
        table.add_row(task, *cells)
    comparison = _paired(store, run_ids)
    return Group(table, Text(comparison.line(*run_ids))) if comparison else table
