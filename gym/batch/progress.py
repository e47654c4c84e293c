"""Progress displays: a redrawn rich bar on a terminal, one line every 30 s in a log file.

`make_progress` is what every long command (batch, validate, calibrate, sft-data, train) shows
progress with; `RichProgress` is the batch runner's display built on it.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from gym.rollout import RolloutOutcome
from gym.store import RolloutRow

LOG_EVERY_S = 30.0  # a line this often in a log: enough to see a run is alive, few enough to read
# The ETA follows the pace of the last 10 minutes: a rollout takes tens of seconds, so rich's
# default 30 s window often holds no finished rollout and shows no ETA at all.
PACE_WINDOW_S = 600.0


def make_progress(*columns: str | ProgressColumn, console: Console, transient: bool = False) -> Progress:
    """A rich Progress: redrawn in place on a terminal; elsewhere (nohup, a CI log) a `LogProgress`."""
    if console.is_terminal:
        return Progress(*columns, console=console, transient=transient, speed_estimate_period=PACE_WINDOW_S)
    return LogProgress(*columns, console=console, transient=transient)


def eta() -> tuple[str, ProgressColumn]:
    """Columns for the time left, labelled so that a log line says what the time is."""
    return ("ETA", TimeRemainingColumn())


class LogProgress(Progress):
    """Progress for output that is not a terminal, where a redrawn bar would show nothing until the end.

    Each task is printed as one line of its text columns (bars and spinners left out): when it is
    added, then at most every `every_s` seconds while it changes, and (unless `transient`, as a
    terminal's bar would vanish) its last state when the display stops.
    """

    def __init__(
        self,
        *columns: str | ProgressColumn,
        console: Console,
        transient: bool = False,
        every_s: float = LOG_EVERY_S,
        get_time: Any = None,
    ):
        super().__init__(
            *columns, console=console, disable=True, get_time=get_time, speed_estimate_period=PACE_WINDOW_S
        )
        self.keep_last, self.every_s = not transient, every_s
        self._due: dict[TaskID, float] = {}  # when each task's next line may be printed
        self._unprinted: set[TaskID] = set()  # tasks changed since their last line

    def add_task(self, description: str, *args: Any, **kwargs: Any) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        self._print(task_id)
        return task_id

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        self._changed(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._changed(task_id)

    def reset(self, task_id: TaskID, **kwargs: Any) -> None:
        super().reset(task_id, **kwargs)
        self._changed(task_id)

    def stop(self) -> None:
        for task_id in sorted(self._unprinted) if self.keep_last else []:
            self._print(task_id)
        super().stop()

    def _changed(self, task_id: TaskID) -> None:
        self._unprinted.add(task_id)
        if self.get_time() >= self._due.get(task_id, 0.0):
            self._print(task_id)

    def _print(self, task_id: TaskID) -> None:
        task = next(t for t in self.tasks if t.id == task_id)
        parts = [_render(column, task) for column in self.columns]
        line = Text(" ").join(part for part in parts if isinstance(part, Text) and part.plain)
        self.console.print(line, soft_wrap=True, highlight=False)
        self._due[task_id] = self.get_time() + self.every_s
        self._unprinted.discard(task_id)


def _render(column: str | ProgressColumn, task: Task) -> Any:
    return Text.from_markup(column.format(task=task)) if isinstance(column, str) else column(task)


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
    """What `egym batch` shows on stderr (a bar, or log lines): done/failed/running, pace, mean, ETA.

    It writes a line per failed rollout above the bar.
    """

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.counters = Counters()
        self.progress = make_progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "[green]{task.fields[done]} done[/] [red]{task.fields[failed]} failed[/] "
                "[cyan]{task.fields[running]} running[/]"
            ),
            TextColumn("{task.fields[rate]:.1f}/min  mean {task.fields[mean]}"),
            TimeElapsedColumn(),
            *eta(),
            console=self.console,
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
