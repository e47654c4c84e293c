"""Progress of a batch: a rich bar with done/failed/running, rollouts per minute and the mean score."""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gym.rollout import RolloutOutcome
from gym.store import RolloutRow


class BatchProgress(Protocol):
    def start(self, run_id: str, *, total: int, done: int, mean: float | None) -> None: ...
    def started(self, row: RolloutRow) -> None: ...
    def finished(self, row: RolloutRow, outcome: RolloutOutcome) -> None: ...
    def close(self) -> None: ...


class NullProgress:
    def start(self, run_id: str, *, total: int, done: int, mean: float | None) -> None:
        pass

    def started(self, row: RolloutRow) -> None:
        pass

    def finished(self, row: RolloutRow, outcome: RolloutOutcome) -> None:
        pass

    def close(self) -> None:
        pass


class Counters:
    """Running totals for this invocation (rate counts only rollouts finished now, not resumed ones)."""

    def __init__(self, done: int = 0, mean: float | None = None):
        self.done, self.failed, self.running, self.finished_now = done, 0, 0, 0
        self._sum, self._n = ((mean or 0.0) * done, done if mean is not None else 0)
        self.t0 = time.monotonic()

    def add(self, outcome: RolloutOutcome) -> None:
        self.running -= 1
        self.finished_now += 1
        if outcome.grade is None:
            self.failed += 1
            return
        self.done += 1
        self._sum += outcome.grade.normalized
        self._n += 1

    @property
    def mean(self) -> float | None:
        return self._sum / self._n if self._n else None

    @property
    def per_minute(self) -> float:
        return self.finished_now * 60 / max(time.monotonic() - self.t0, 1e-9)


class RichProgress:
    """The bar `egym batch` shows; it writes a line per failed rollout above the bar."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.counters = Counters()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "[green]{task.fields[done]} done[/] [red]{task.fields[failed]} failed[/] "
                "[cyan]{task.fields[running]} running[/]"
            ),
            TextColumn("{task.fields[rate]:.1f}/min  mean {task.fields[mean]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.bar = None

    def start(self, run_id: str, *, total: int, done: int, mean: float | None) -> None:
        self.counters = Counters(done, mean)
        self.progress.start()
        self.bar = self.progress.add_task(run_id, total=total, completed=done, **self._fields())

    def _fields(self) -> dict:
        c = self.counters
        mean = f"{c.mean:.3f}" if c.mean is not None else "-"
        return {"done": c.done, "failed": c.failed, "running": c.running, "rate": c.per_minute, "mean": mean}

    def started(self, row: RolloutRow) -> None:
        self.counters.running += 1
        self.progress.update(self.bar, **self._fields())

    def finished(self, row: RolloutRow, outcome: RolloutOutcome) -> None:
        self.counters.add(outcome)
        if outcome.error and outcome.grade is None:
            self.progress.console.print(
                f"[red]failed[/] {row.task} #{row.sample} ({row.id}): {outcome.error}"
            )
        self.progress.update(self.bar, advance=1, **self._fields())

    def close(self) -> None:
        self.progress.stop()
