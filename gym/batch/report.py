"""Per-task score tables from stored rollouts (used by `egym batch`, `egym runs RUN` and the demo)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.table import Table

from gym.store import RolloutRow


def fmt_points(value: float | None) -> str:
    if value is None:
        return "-"
    return str(int(value)) if value == int(value) else f"{value:.1f}"


@dataclass(frozen=True)
class TaskScores:
    task: str
    rollouts: int
    done: int
    failed: int
    incomplete: int
    earned: float | None  # mean over done rollouts
    possible: int | None
    mean: float | None  # mean normalized score
    pass_rate: float | None

    @property
    def score(self) -> str:
        """Like '183/183' (the mean earned over the possible points)."""
        return f"{fmt_points(self.earned)}/{self.possible}" if self.possible is not None else "-"


def task_scores(rows: Iterable[RolloutRow]) -> list[TaskScores]:
    by_task: dict[str, list[RolloutRow]] = {}
    for row in rows:
        by_task.setdefault(row.task, []).append(row)
    out = []
    for task, group in sorted(by_task.items()):
        done = [r for r in group if r.status == "done" and r.reward is not None]
        n = len(done)
        out.append(
            TaskScores(
                task=task,
                rollouts=len(group),
                done=n,
                failed=sum(r.status == "failed" for r in group),
                incomplete=sum(bool(r.incomplete) for r in done),
                earned=sum(r.earned or 0.0 for r in done) / n if n else None,
                possible=max((r.possible or 0) for r in done) if n else None,
                mean=sum(r.reward or 0.0 for r in done) / n if n else None,
                pass_rate=_pass_rate(done),
            )
        )
    return out


def _pass_rate(done: list[RolloutRow]) -> float | None:
    """Passes over the rollouts whose grade is complete (an incomplete grade neither passes nor fails)."""
    known = [r for r in done if r.passed is not None]
    return sum(bool(r.passed) for r in known) / len(known) if known else None


def score_table(rows: Iterable[RolloutRow], title: str = "") -> Table:
    table = Table(title=title or None, title_justify="left")
    for name, justify in (
        ("task", "left"),
        ("rollouts", "right"),
        ("failed", "right"),
        ("score", "right"),
        ("mean", "right"),
        ("pass", "right"),
    ):
        table.add_column(name, justify=justify)
    for s in task_scores(rows):
        table.add_row(
            s.task,
            str(s.rollouts),
            f"[red]{s.failed}[/]" if s.failed else "0",
            s.score + (f" [yellow]({s.incomplete} incomplete)[/]" if s.incomplete else ""),
            f"{s.mean:.1%}" if s.mean is not None else "-",
            f"{s.pass_rate:.0%}" if s.pass_rate is not None else "-",
        )
    return table
