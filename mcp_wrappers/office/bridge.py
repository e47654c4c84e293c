"""One headless LibreOffice per process, reached through UNO over a named pipe.

`OfficeBridge.run(fn, what)` calls `fn(session)` on a single UNO worker thread:
LibreOffice starts on the first call (lazily), is restarted when it has died,
and a call that does not finish within the timeout kills it, so the caller
gets a clear error instead of hanging. Each process gets its own profile
folder and pipe name, so the agent's server and the grader's reader never
share an instance.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mcp_wrappers.office.files import OfficeError

T = TypeVar("T")

# No lock files next to documents (they would show up in /workspace), no
# recovery or autosave of LibreOffice's own: the server saves explicitly.
_REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
{items}
</oor:items>
"""
_SETTINGS = {
    "/org.openoffice.Office.Common/Misc": {
        "UseLocking": "false",
        "UseDocumentSystemFileLocking": "false",
        "UseDocumentOOoLockFile": "false",
        "FirstRun": "false",
    },
    "/org.openoffice.Office.Recovery/AutoSave": {"Enabled": "false"},
    "/org.openoffice.Office.Recovery/RecoveryInfo": {"Enabled": "false"},
}


def _registry_xml() -> str:
    items = [
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value></prop></item>'
        for path, props in _SETTINGS.items()
        for name, value in props.items()
    ]
    return _REGISTRY.format(items="\n".join(items))


@dataclass
class Session:
    """What a call gets: the live desktop plus per-instance state (open documents) that dies with it."""

    ctx: Any
    desktop: Any
    docs: dict[Path, Any] = field(default_factory=dict)


class OfficeTimeout(OfficeError):
    """A call did not finish in its time; LibreOffice was killed (the next call starts a fresh one)."""

    def __init__(self, message: str, seconds: float):
        super().__init__(message)
        self.seconds = seconds


class _BridgeLost(Exception):
    """The UNO connection broke (LibreOffice died or was killed)."""


class OfficeBridge:
    def __init__(
        self,
        name: str = "office",
        *,
        call_timeout_s: float | None = None,
        start_timeout_s: float = 60.0,
        soffice: str = "soffice",
    ):
        self.name = name
        self.call_timeout_s = call_timeout_s or float(os.environ.get("EGYM_OFFICE_TIMEOUT_S", "60"))
        self.start_timeout_s = start_timeout_s
        self.soffice = soffice
        self.starts = 0  # how many times LibreOffice was started (more than 1: it was restarted)
        self._proc: subprocess.Popen[bytes] | None = None
        self._session: Session | None = None
        self._profile: Path | None = None
        # Unguessable: the pipe's socket lives in /tmp, where the agent could squat a predictable name.
        self._pipe = f"egym-{name}-{secrets.token_hex(8)}"
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"uno-{name}")
        self._lock = threading.Lock()  # one call at a time, including its timeout handling
        self._stopped = False  # kill() was called: a start on the UNO thread must not outlive it

    # -- public ---------------------------------------------------------------

    def run(self, fn: Callable[[Session], T], what: str, *, timeout_s: float | None = None) -> T:
        """Run `fn(session)` on the UNO thread; restart LibreOffice once if the connection is lost.

        `timeout_s` caps the call, start-up included (default: the call timeout, plus the
        start timeout when LibreOffice is not running).
        """
        with self._lock:
            for attempt in (1, 2):
                budget = self.call_timeout_s + (0 if self._alive() else self.start_timeout_s)
                budget = budget if timeout_s is None else min(budget, timeout_s)
                future = self._executor.submit(self._call, fn)
                try:
                    return future.result(timeout=budget)
                except FutureTimeout:
                    self._kill()
                    # The stuck call unblocks once the pipe breaks; don't queue behind it regardless.
                    self._executor.shutdown(wait=False, cancel_futures=True)
                    self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"uno-{self.name}")
                    self._session = None
                    raise OfficeTimeout(
                        f"LibreOffice did not finish {what} within {budget:.0f} s and was restarted; files keep "
                        "their last saved state. Retry, or split the work into smaller steps.",
                        budget,
                    ) from None
                except _BridgeLost:
                    self._kill()
                    if attempt == 2:
                        raise OfficeError(
                            f"LibreOffice crashed twice while {what}; the file may be damaged"
                        ) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Quit LibreOffice and remove the profile folder. Safe to call twice."""
        with contextlib.suppress(Exception):
            if self._session is not None and self._alive():
                self._executor.submit(self._session.desktop.terminate).result(timeout=5)
        self._kill()
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None
        with contextlib.suppress(OSError):  # the pipe's socket file (osl keeps it in /tmp)
            Path(f"/tmp/OSL_PIPE_{os.getuid()}_{self._pipe}").unlink()

    # -- on the UNO thread ----------------------------------------------------

    def _call(self, fn: Callable[[Session], T]) -> T:
        import uno  # noqa: F401 - sets up the com.sun.star import hook
        from com.sun.star.lang import DisposedException
        from com.sun.star.uno import Exception as UnoException
        from com.sun.star.uno import RuntimeException

        if self._session is None or not self._alive():
            self._start()
        assert self._session is not None
        try:
            return fn(self._session)
        except DisposedException:
            raise _BridgeLost() from None
        except RuntimeException as exc:
            if not self._responds():
                raise _BridgeLost() from None
            raise OfficeError(f"LibreOffice refused the operation: {_uno_message(exc)}") from None
        except UnoException as exc:
            if not self._responds():  # a dead bridge can surface as any UNO exception
                raise _BridgeLost() from None
            raise OfficeError(f"LibreOffice error: {_uno_message(exc)}") from None

    def _start(self) -> None:
        import uno
        from com.sun.star.connection import NoConnectException

        self._kill()
        if self._profile is None:
            self._profile = Path(tempfile.mkdtemp(prefix=f"egym-{self.name}-profile-"))
        user = self._profile / "user"
        user.mkdir(parents=True, exist_ok=True)
        (user / "registrymodifications.xcu").write_text(_registry_xml())
        cmd = [
            self.soffice,
            "--headless",
            "--invisible",
            "--nologo",
            "--norestore",
            "--nodefault",
            "--nofirststartwizard",
            f"-env:UserInstallation={self._profile.as_uri()}",
            f"--accept=pipe,name={self._pipe};urp;StarOffice.ComponentContext",
        ]
        tmp = self._profile / "tmp"  # LibreOffice's temporary files go away with the profile
        tmp.mkdir(exist_ok=True)
        try:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "TMPDIR": str(tmp)},
            )
        except OSError as exc:
            raise OfficeError(f"cannot start LibreOffice ({self.soffice}): {exc.strerror}") from None
        if self._stopped:  # kill() ran while this start was under way
            self._kill()
            raise OfficeError("LibreOffice was stopped")
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                ctx = resolver.resolve(f"uno:pipe,name={self._pipe};urp;StarOffice.ComponentContext")
                break
            except NoConnectException:
                if self._proc.poll() is not None:
                    raise OfficeError(
                        f"LibreOffice exited during start-up (code {self._proc.returncode})"
                    ) from None
                if time.monotonic() > deadline:
                    self._kill()
                    raise OfficeError(
                        f"LibreOffice did not start within {self.start_timeout_s:.0f} s"
                    ) from None
                time.sleep(0.05)
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        self.starts += 1
        self._session = Session(ctx=ctx, desktop=desktop)

    def _responds(self) -> bool:
        """Whether LibreOffice still answers (soffice.bin may die while its launcher lingers)."""
        if not self._alive() or self._session is None:
            return False
        try:
            self._session.desktop.getFrames()
        except Exception:  # noqa: BLE001 - any failure here means the bridge is gone
            return False
        return True

    # -- process ---------------------------------------------------------------

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def kill(self) -> None:
        """Kill LibreOffice now and start none again (from a signal handler too): its whole process group."""
        self._stopped = True
        self._kill()

    def _kill(self) -> None:
        """Kill LibreOffice's whole process group (soffice is a script that starts soffice.bin)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def _uno_message(exc: Exception) -> str:
    message = getattr(exc, "Message", "") or str(exc)
    return message.strip().splitlines()[0] if message.strip() else type(exc).__name__
