"""`egym runs`: the list of runs, and one run's per-task scores and rollouts."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table

from gym.batch.report import family_table, fmt_points, score_table, task_scores
from gym.store import Store

STATUS_STYLE = {
    "done": "green",
    "failed": "red",
    "running": "cyan",
    "pending": "dim",
    "interrupted": "yellow",
}


def _styled(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status}[/]"


def runs_table(store: Store, *, limit: int = 30) -> Table:
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
    for run in store.list_runs(limit=limit):
        stats = store.run_stats(run.id)
        table.add_row(
            run.id,
            run.kind,
            f"{run.created_at:%Y-%m-%d %H:%M}",
            run.policy,
            run.model or "",
            str(len(run.tasks)),
            str(stats["total"]),
            str(stats["done"]),
            str(stats["failed"]),
            f"{stats['mean_reward']:.3f}" if stats["mean_reward"] is not None else "-",
            f"{stats['pass_rate']:.0%}" if stats["pass_rate"] is not None else "-",
            _styled(run.status),
        )
    return table


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


def compare_table(store: Store, run_ids: list[str]) -> Table:
    """Tasks down, runs across: each cell the mean score like '183/183' and the pass rate."""
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
    return table
