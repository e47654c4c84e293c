"""Per-task score tables from stored rollouts (used by `egym batch`, `egym runs RUN` and the demo)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.table import Table

from gym.families import family_level
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


@dataclass(frozen=True)
class FamilyScores:
    """One family level over its sampled instances (seeds)."""

    family: str
    level: int
    instances: int
    solved: int  # instances whose every complete rollout passed
    rollouts: int
    mean: float | None
    pass_rate: float | None

    @property
    def consistent(self) -> bool:
        """Every sampled instance solved: AppWorld's scenario goal completion, per family level."""
        return self.instances > 0 and self.solved == self.instances


def family_scores(rows: Iterable[RolloutRow]) -> list[FamilyScores]:
    """Pass rate per family and level, and how many of its sampled instances were solved every time."""
    by_level: dict[tuple[str, int], list[RolloutRow]] = {}
    for row in rows:
        parts = family_level(row.task)
        if parts is not None:
            by_level.setdefault(parts, []).append(row)
    out = []
    for (family, level), group in sorted(by_level.items()):
        done = [r for r in group if r.status == "done" and r.reward is not None]
        per_instance: dict[str, list[RolloutRow]] = {}
        for row in done:
            per_instance.setdefault(row.task, []).append(row)
        solved = sum(
            all(r.passed for r in rs if r.passed is not None) and any(r.passed is not None for r in rs)
            for rs in per_instance.values()
        )
        out.append(
            FamilyScores(
                family=family,
                level=level,
                instances=len({r.task for r in group}),
                solved=solved,
                rollouts=len(group),
                mean=sum(r.reward or 0.0 for r in done) / len(done) if done else None,
                pass_rate=_pass_rate(done),
            )
        )
    return out


def family_table(rows: Iterable[RolloutRow]) -> Table | None:
    """Per family level: instances solved, pass rate, mean; the consistency share in the title (None: no families)."""
    scores = family_scores(rows)
    if not scores:
        return None
    consistent = sum(s.consistent for s in scores)
    title = (
        f"families: {consistent}/{len(scores)} family levels consistent "
        f"({consistent / len(scores):.0%}: every sampled seed solved)"
    )
    table = Table(title=title, title_justify="left")
    for name in ("family", "level", "instances", "solved", "rollouts", "mean", "pass"):
        table.add_column(name, justify="left" if name == "family" else "right")
    for s in scores:
        table.add_row(
            s.family,
            str(s.level),
            str(s.instances),
            f"{s.solved}/{s.instances}" + (" [green]all[/]" if s.consistent else ""),
            str(s.rollouts),
            f"{s.mean:.1%}" if s.mean is not None else "-",
            f"{s.pass_rate:.0%}" if s.pass_rate is not None else "-",
        )
    return table
