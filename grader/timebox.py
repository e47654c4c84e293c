"""Run rubric checks under a time limit, so one slow or stuck check cannot hold a grade.

    runner = CheckRunner()
    value = runner.run(lambda probe: check(CheckContext(probe, ...)), probe, limit_s=10, deadline=t)

Checks run one at a time on a daemon worker thread. Time a check spends waiting
on the probe (SQL round trips, a LibreOffice read) is not counted against its
limit: those calls have timeouts of their own, and the limit is for the check's
own work. The grade's `deadline` (monotonic) bounds everything, probe time
included. A check over either is abandoned: its probe is revoked (any later call
raises), an exception is raised in its thread at its next Python instruction,
and a fresh worker takes the next check.

Whatever a check raises stays that check's: KeyboardInterrupt and SystemExit
come back as CheckCrashed, never stopping the command. Python cannot interrupt
a thread blocked in C (a long sleep returns first; a catastrophic regex holds
the interpreter lock); an abandoned thread is a daemon, so it never delays exit.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import time
from collections.abc import Callable
from typing import Any


class CheckTimeout(Exception):
    """The check ran over its own limit or the grade's budget."""


class CheckCrashed(Exception):
    """The check raised something that is not an Exception (KeyboardInterrupt, SystemExit, ...)."""


class _Abandoned(BaseException):
    """Raised inside an abandoned check's thread to stop it at its next instruction."""


class _Job:
    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as exc:  # noqa: BLE001 - a check's own exceptions are its item's error
            self.error = exc
        finally:
            self.done.set()


class _Worker(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True, name="egym-check")
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.start()

    def run(self) -> None:
        try:
            while (job := self.jobs.get()) is not None:
                job.run()
        except _Abandoned:  # landed between jobs: this worker was leaving anyway
            pass


# What a check may call: the Probe protocol's read methods (grader.probe.Probe), nothing else.
READ_METHODS = frozenset({"sql", "chat", "mail", "file", "document", "prefetch", "changes"})


class TimedProbe:
    """What a check sees as `ctx.probe`: the probe's read methods only, timed and revocable.

    Anything else (the live sandbox behind a SandboxProbe, its caches) is an AttributeError:
    a check that could run commands in the sandbox could change the state it grades, and
    the agent would be charged for it. (A check is trusted code: this stops accidents, not
    a check determined to dig through Python's internals.)
    """

    __slots__ = ("_probe", "_lock", "_revoked", "_inside", "_entered")

    def __init__(self, probe: Any):
        self._probe = probe
        self._lock = threading.Lock()
        self._revoked = False
        self._inside = 0.0
        self._entered: float | None = None

    def __getattr__(self, name: str) -> Any:
        if name not in READ_METHODS:
            raise AttributeError(
                f"a check's probe has no {name!r}: checks read the final state only through "
                f"{', '.join(sorted(READ_METHODS))}"
            )
        attr = getattr(self._probe, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                if self._revoked:
                    raise CheckTimeout("the check's time is up")
                self._entered = time.monotonic()
            try:
                return attr(*args, **kwargs)
            finally:
                with self._lock:
                    self._inside += time.monotonic() - self._entered
                    self._entered = None

        return call

    def own_seconds(self, started: float) -> float:
        """Wall time since `started` minus the time spent inside probe calls."""
        with self._lock:
            now = time.monotonic()
            inside = self._inside + (now - self._entered if self._entered is not None else 0.0)
        return now - started - inside

    def revoke(self, *, force: bool = False) -> bool:
        """Refuse further calls. False (and nothing revoked) while a call is in progress, unless `force`."""
        with self._lock:
            if self._entered is not None and not force:
                return False
            self._revoked = True
            return True


class CheckRunner:
    """Runs checks one after another on a worker thread, abandoning any that overrun."""

    def __init__(self) -> None:
        self._worker: _Worker | None = None

    def run(self, fn: Callable[[Any], Any], probe: Any, *, limit_s: float, deadline: float) -> Any:
        """`fn(probe)`'s value; CheckTimeout over the limit or past `deadline`; CheckCrashed for BaseExceptions."""
        if time.monotonic() >= deadline:
            raise CheckTimeout("the grade's time budget was used up before this check")
        timed = TimedProbe(probe)
        job = _Job(lambda: fn(timed))
        worker = self._worker = self._worker or _Worker()
        worker.jobs.put(job)
        started = time.monotonic()
        while not job.done.wait(self._wait(timed, started, limit_s, deadline)):
            over_budget = time.monotonic() >= deadline
            over_limit = timed.own_seconds(started) >= limit_s
            # Over its own limit, a check inside a probe call is left to finish that call first.
            if (over_budget or over_limit) and timed.revoke(force=over_budget):
                self._abandon(worker)
                raise CheckTimeout(
                    "the grade's time budget ran out during this check"
                    if over_budget
                    else f"the check ran over its {limit_s:g} s limit"
                )
        if job.error is not None and not isinstance(job.error, Exception):
            raise CheckCrashed(f"{type(job.error).__name__}: {job.error}") from None
        if job.error is not None:
            raise job.error
        return job.value

    @staticmethod
    def _wait(timed: TimedProbe, started: float, limit_s: float, deadline: float) -> float:
        now = time.monotonic()
        return max(0.005, min(limit_s - timed.own_seconds(started), deadline - now))

    def _abandon(self, worker: _Worker) -> None:
        self._worker = None
        worker.jobs.put(None)  # leave after the current job, if it ever returns
        if worker.ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(worker.ident), ctypes.py_object(_Abandoned)
            )

    def close(self) -> None:
        if self._worker is not None:
            self._worker.jobs.put(None)
            self._worker = None
