"""LocalSandbox: the Sandbox protocol in this process's host, without Docker. A test double.

It exists so the tests of harness, grader and trainer *logic* (the agent loop,
the persistent shell, the file tools, timeouts, output caps, sealing) run in
seconds on a machine with no Docker engine: `make test-fast`. It lives under
tests/ because nothing in the product may select it: it isolates nothing.

What it does
------------
- A private temporary directory (`root`) stands in for the container's file
  system. `root/workspace`, `root/home/agent` and `root/tmp` exist from the
  start; agent commands start in `root/workspace` (the image's WORKDIR).
- The paths the protocol takes are container paths and are mapped under
  `root`: `read_file("/workspace/a.txt")` reads `root/workspace/a.txt`, and so
  do `write_file`, `exec(cwd=...)` and the default working directories
  (`/workspace` for the agent, `/` for other users). A path already under
  `root` (what `pwd` prints in the sandbox) is taken as is. `host_path()` does
  the mapping for tests. Run the harness with
  `HarnessConfig(workdir=sandbox.workspace)`: inside the shell and the file
  tools `/workspace` is the host's path (see below), and the file-tools helper
  falls back to it.
- `exec` runs the command with bash (a string) or directly (a list) in a
  process group of its own, with the same `ExecResult` as DockerSandbox:
  stdout and stderr interleaved, at most `max_output` bytes kept (`truncated`),
  past `timeout` the group gets SIGTERM, then SIGKILL 2 s later, exit code 124
  or 137 and `timed_out=True`, as coreutils `timeout -k 2` reports it.
- Commands by any user other than `agent` must pass gym.sandbox.privilege's
  rules (absolute program path, a working directory the agent cannot write,
  `python -I`), exactly as in DockerSandbox.
- Programs are the host's. `python3`/`python` on the PATH and the image's
  interpreter `/opt/egym/venv/bin/python3` run this process's interpreter
  (`sys.executable`), so `fileops_remote` and in-process MCP test servers work.
- `read_file` honours `max_bytes` (FileTooLarge, an OSError), raises
  FileNotFoundError when absent and IsADirectoryError for anything but a regular
  file (a symlink, folder or FIFO), as DockerSandbox does.
- `open_stdio` gives a process's stdin/stdout as a byte stream (stderr is kept
  in `stderr_tail`, like DockerStdio).
- Every process it starts carries `EGYM_LOCAL_SANDBOX=<id>` in its environment.
  `seal()` kills every live process of the host that carries this sandbox's
  agent tag (background jobs, `setsid` daemons included) and refuses agent
  commands afterwards, as DockerSandbox does; `close()` kills the rest and
  removes `root`.

What it does NOT do (never run an untrusted or learning agent in it)
--------------------------------------------------------------------
- No isolation at all. Commands run as the user running the tests (root, on
  this project's machines), with that user's rights, network, processes and
  files. `kill -9 -1`, `rm -rf /` or a fork bomb hit the host.
- Absolute paths inside command text are NOT rewritten: `cat /workspace/a.txt`
  in `exec` or the harness's bash tool reads the host's /workspace, and the
  file tools given `/workspace/...` create it on the host (as root, they can).
  Tests use relative paths (the agent starts in the workspace), `$HOME`,
  `$EGYM_SANDBOX_ROOT` or `sandbox.host_path(...)`. /tmp in
  command text is the host's shared /tmp (`$TMPDIR` points into `root/tmp`).
  Symlinks inside `root` are followed by commands wherever they point;
  `read_file`/`write_file` refuse a path that resolves outside `root`.
- No users: `user=` only selects the rules above, the environment (`USER`,
  `HOME`) and the seal tag; every process has the host uid, and file owners
  and modes are not enforced between "users" (`whoami` is the host user).
- No limits: no pids, memory or CPU limits, no per-agent process limit.
- A process that clears or rewrites its environment escapes `seal()`.
- No apps. There is no PostgreSQL (even when the host has one installed), no
  chat service, no LibreOffice and no MCP app servers:
  `start(apps=[...])` with any app, or an overlay with `sql/` or `chat/` initial-state
  files, raises SandboxError. Tests that need them use DockerSandbox and carry
  `@pytest.mark.docker`. A workspace overlay (`workspace/...`) is applied.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from pathlib import Path

from core.errors import SandboxError
from gym.sandbox.base import ExecResult
from gym.sandbox.docker_sandbox import MAX_EXEC_OUTPUT, MAX_FILE_BYTES, FileTooLarge
from gym.sandbox.privilege import AGENT, privileged_command

MARKER = "EGYM_LOCAL_SANDBOX"  # every process started here carries MARKER=<tag> (agent) or <tag>:<user>
IMAGE_PYTHON = "/opt/egym/venv/bin/python3"  # mcp_wrappers.PYTHON's interpreter in the image
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KILL_GRACE_S = 2.0  # like `timeout -k 2`
TIMEOUT_TERM, TIMEOUT_KILL = 124, 137


class LocalSandbox:
    """A temp folder and host processes behind the Sandbox protocol. Create with `LocalSandbox.start()`; `close()` it.

    For tests of harness, grader and trainer logic only: it isolates nothing (see the module docstring).
    """

    def __init__(self, root: Path, *, run_id: str = "local", rollout_id: str | None = None):
        self.root = root
        self.id = f"local-{uuid.uuid4().hex}"
        self.run_id = run_id
        self.rollout_id = rollout_id or uuid.uuid4().hex[:12]
        self.agent_uid = os.getuid()  # there is no agent user: everything runs as the host user
        self.sealed = False
        self.closed = False
        self._bin = root / ".egym-local" / "bin"
        self._procs: list[subprocess.Popen] = []
        self._lock = threading.Lock()

    # -- life cycle -------------------------------------------------------

    @classmethod
    def start(
        cls,
        *,
        apps: tuple[str, ...] | list[str] = (),
        overlay: bytes | None = None,
        run_id: str = "local",
        rollout_id: str | None = None,
    ) -> LocalSandbox:
        """A fresh sandbox; `overlay` (see overlay.overlay_tar) may only carry workspace files."""
        if apps:
            raise SandboxError(
                f"LocalSandbox cannot run the apps {', '.join(apps)}: it has no PostgreSQL, chat service or "
                "LibreOffice (the egym/world image does); use DockerSandbox and mark the test @pytest.mark.docker"
            )
        root = Path(tempfile.mkdtemp(prefix="egym-local-")).resolve()
        sandbox = cls(root, run_id=run_id, rollout_id=rollout_id)
        try:
            for folder in ("workspace", "home/agent", "tmp", "root"):
                (root / folder).mkdir(parents=True)
            sandbox._bin.mkdir(parents=True)
            for name in ("python3", "python"):  # the image's PATH starts with its venv's python
                wrapper = sandbox._bin / name
                wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
                wrapper.chmod(0o755)
            if overlay:
                sandbox._apply_overlay(overlay)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def _apply_overlay(self, overlay: bytes) -> None:
        with tarfile.open(fileobj=io.BytesIO(overlay)) as tar:
            members = tar.getmembers()
            for member in members:
                name = member.name.removeprefix("./")
                if member.isfile() and name.split("/", 1)[0] in ("sql", "chat"):
                    raise SandboxError(
                        f"LocalSandbox cannot apply the overlay's {name}: it has no PostgreSQL "
                        "or chat service; use DockerSandbox (@pytest.mark.docker)"
                    )
            workspace = []
            for member in members:
                name = member.name.removeprefix("./")
                if name.startswith("workspace/") and name != "workspace/":
                    member.name = name.removeprefix("workspace/")
                    workspace.append(member)
            tar.extractall(self.root / "workspace", members=workspace, filter="data")

    def close(self) -> None:
        """Kill every process this sandbox started and remove its folder. Safe to call twice."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._kill_tagged(agent_only=False)
        if sys.version_info >= (3, 12):
            shutil.rmtree(self.root, onexc=_make_writable_and_retry)
        else:
            shutil.rmtree(self.root, onerror=_make_writable_and_retry)

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def seal(self) -> str:
        """End the agent's episode: kill every process tagged as this sandbox's agent; refuse agent commands after."""
        self.sealed = True
        ended = self._kill_tagged(agent_only=True)
        return f"ended: {ended} processes, 0 database sessions"

    # -- paths ---------------------------------------------------------------

    @property
    def workspace(self) -> str:
        """The agent's /workspace on the host. Give it to the harness: `HarnessConfig(workdir=sandbox.workspace)`
        (the harness's default `/workspace` does not exist on the host, and the file tools fall back to it)."""
        return str(self.root / "workspace")

    def host_path(self, path: str) -> Path:
        """Where a container path lives on the host: under `root` (a path already under `root` stays)."""
        text = os.fspath(path)
        root = str(self.root)
        if text == root or text.startswith(root + "/"):
            text = text[len(root) :] or "/"
        normal = posixpath.normpath("/" + text.lstrip("/"))  # "/../x" is "/x": nothing climbs out of root
        return self.root / normal.lstrip("/")

    def _inside(self, host: Path, shown: str) -> None:
        real = os.path.realpath(host)
        if real != str(self.root) and not real.startswith(str(self.root) + "/"):
            raise PermissionError(f"{shown} resolves to {real}, outside the sandbox")

    # -- commands ----------------------------------------------------------

    def _command(self, cmd: str | list[str], user: str, cwd: str | None) -> tuple[list[str], Path]:
        if self.closed:
            raise SandboxError(f"sandbox {self.id} is closed")
        root = str(self.root)
        if cwd is not None and (cwd == root or cwd.startswith(root + "/")):
            cwd = cwd[len(root) :] or "/"  # back to a container path, so the privilege rules see what it is
        if user != AGENT:
            argv, cwd = privileged_command(cmd, cwd, user)
        else:
            if self.sealed:
                raise SandboxError(f"the agent's episode in {self.id[:12]} has ended: no more agent commands")
            argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
            cwd = cwd or "/workspace"
        if not argv:
            raise SandboxError("empty command")
        if argv[0] == IMAGE_PYTHON:
            argv = [sys.executable, *argv[1:]]
        return argv, self.host_path(cwd)

    def _env(self, user: str, extra: dict[str, str] | None) -> dict[str, str]:
        home = self.root / ("home/agent" if user == AGENT else "root")
        env = {
            "PATH": f"{self._bin}:{BASE_PATH}",
            "HOME": str(home),
            "USER": user,
            "LOGNAME": user,
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TMPDIR": str(self.root / "tmp"),
            "EGYM_SANDBOX_ROOT": str(self.root),
        }
        env.update(extra or {})
        env[MARKER] = self._tag(user)
        return env

    def _tag(self, user: str) -> str:
        return self.id if user == AGENT else f"{self.id}:{user}"

    def _spawn(
        self, argv: list[str], cwd: Path, user: str, env: dict[str, str] | None, **pipes
    ) -> subprocess.Popen:
        if not cwd.is_dir():
            raise NotADirectoryError(f"working directory {cwd} does not exist")
        proc = subprocess.Popen(argv, cwd=cwd, env=self._env(user, env), start_new_session=True, **pipes)
        with self._lock:
            self._procs = [p for p in self._procs if p.poll() is None]
            self._procs.append(proc)
        return proc

    def exec(
        self,
        cmd: str | list[str],
        *,
        timeout: float = 60,
        user: str = AGENT,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_output: int = MAX_EXEC_OUTPUT,
    ) -> ExecResult:
        argv, workdir = self._command(cmd, user, cwd)
        started = time.monotonic()
        try:
            proc = self._spawn(
                argv,
                workdir,
                user,
                env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except NotADirectoryError as exc:  # docker exec fails the same way: the runtime cannot chdir
            return ExecResult(126, f"{exc}\n", False, time.monotonic() - started)
        except (FileNotFoundError, PermissionError) as exc:
            return ExecResult(
                127, f"{argv[0]}: cannot run: {exc.strerror or exc}\n", False, time.monotonic() - started
            )
        kept: list[bytes] = []
        size, truncated = 0, False
        deadline = started + timeout
        fd = proc.stdout.fileno()
        try:
            # Read everything (the process must not block on a full pipe), keep at most max_output bytes.
            eof = False
            while not eof and (remaining := deadline - time.monotonic()) > 0:
                if not select.select([fd], [], [], remaining)[0]:
                    continue
                chunk = os.read(fd, 65536)
                eof = not chunk
                room = max_output - size
                truncated = truncated or len(chunk) > room
                if room > 0 and chunk:
                    kept.append(chunk[:room])
                    size += len(kept[-1])
            timed_out = False
            try:
                code = proc.wait(max(deadline - time.monotonic(), 0) if eof else 0)
            except subprocess.TimeoutExpired:
                code, timed_out = self._terminate(proc), True
                while select.select([fd], [], [], 0.2)[0] and (
                    chunk := os.read(fd, 65536)
                ):  # what it wrote last
                    room = max_output - size
                    truncated = truncated or len(chunk) > room
                    if room > 0:
                        kept.append(chunk[:room])
                        size += len(kept[-1])
        finally:
            proc.stdout.close()
        if code < 0:  # killed by a signal: report it as a shell (and docker exec through `timeout`) does
            code = 128 - code
        output = b"".join(kept).decode(errors="replace")
        return ExecResult(code, output, timed_out, time.monotonic() - started, truncated)

    @staticmethod
    def _terminate(proc: subprocess.Popen) -> int:
        """SIGTERM the command's process group, SIGKILL after the grace; the exit code `timeout -k` gives."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(KILL_GRACE_S)
            code = TIMEOUT_TERM
        except subprocess.TimeoutExpired:
            code = TIMEOUT_KILL
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return code

    def open_stdio(
        self, cmd: list[str], *, user: str = AGENT, env: dict[str, str] | None = None
    ) -> LocalStdio:
        argv, workdir = self._command(cmd, user, None)
        try:
            proc = self._spawn(
                argv,
                workdir,
                user,
                env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
            )
        except OSError as exc:
            raise SandboxError(f"could not start {shlex.join(cmd)} in {self.id[:12]}: {exc}") from None
        return LocalStdio(proc)

    # -- processes -------------------------------------------------------------

    def _tagged_pids(self, agent_only: bool) -> list[int]:
        """Live processes of the host whose environment carries this sandbox's tag."""
        agent = f"\0{MARKER}={self.id}\0".encode()
        anyone = f"\0{MARKER}={self.id}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    environ = b"\0" + handle.read() + b"\0"
            except OSError:  # gone, or not ours to read
                continue
            if (agent in environ) if agent_only else (anyone in environ):
                found.append(int(entry))
        return found

    def _kill_tagged(self, *, agent_only: bool) -> int:
        """SIGKILL tagged processes until none is left (a fork can race one pass); returns how many were killed."""
        killed: set[int] = set()
        for _ in range(100):
            self._reap()
            pids = [pid for pid in self._tagged_pids(agent_only) if pid != os.getpid()]
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(0.02)
        self._reap()
        return len(killed)

    def _reap(self) -> None:
        """Collect our direct children that have exited (a zombie still shows its environment)."""
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.poll()

    # -- files ---------------------------------------------------------------

    def read_file(self, path: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        """A regular file's bytes (a symlink, folder or FIFO raises IsADirectoryError); FileTooLarge past max_bytes."""
        host = self.host_path(path)
        try:
            info = host.lstat()
        except FileNotFoundError:
            raise FileNotFoundError(path) from None
        except NotADirectoryError:
            raise FileNotFoundError(path) from None
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(path)
        self._inside(host, path)  # a symlinked folder on the way
        if info.st_size > max_bytes:
            raise FileTooLarge(f"{path} has {info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
        with open(host, "rb") as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:  # it grew since lstat
            raise FileTooLarge(f"{path} is over the {max_bytes:,}-byte limit")
        return data

    def write_file(self, path: str, data: bytes, *, user: str = AGENT, mode: int = 0o644) -> None:
        """Write `data` (replacing a file or symlink there), creating folders. `user` owns nothing: one host uid."""
        host = self.host_path(path)
        existing = host.parent
        while not existing.exists():
            existing = existing.parent
        self._inside(existing, path)  # before making folders: a symlinked folder must not lead out
        host.parent.mkdir(parents=True, exist_ok=True)
        if host.is_dir() and not host.is_symlink():
            raise IsADirectoryError(path)
        fd, staging = tempfile.mkstemp(dir=host.parent, prefix=".egym-write-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(staging, mode)
            os.replace(staging, host)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(staging)
            raise


class LocalStdio:
    """A process's stdin/stdout as a byte stream (the StdioStream protocol); stderr kept in `stderr_tail`."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.stderr_tail = b""
        self._closed = False
        self._eof = False
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        threading.Thread(target=self._drain_stderr, name="egym-local-stderr", daemon=True).start()

    def _drain_stderr(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(self.proc.stderr.fileno(), 65536):
                self.stderr_tail = (self.stderr_tail + chunk)[-4096:]
        with contextlib.suppress(OSError):
            self.proc.stderr.close()

    def write(self, data: bytes) -> None:
        with self._write_lock:
            if self._closed:
                raise BrokenPipeError("the stream is closed")
            view = memoryview(data)
            while view:
                view = view[os.write(self.proc.stdin.fileno(), view) :]

    def read(self, max_bytes: int = 65536) -> bytes:
        """Blocks until bytes arrive; b"" at end of stream."""
        with self._read_lock:
            if self._eof:
                return b""
            chunk = os.read(self.proc.stdout.fileno(), max_bytes)
            if not chunk:
                self._eof = True
                self.proc.stdout.close()
            return chunk

    def close_stdin(self) -> None:
        """Send EOF to the process (it usually exits)."""
        with self._write_lock:
            self._closed = True
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def close(self) -> None:
        """EOF to the process; like a closed docker exec stream, a process that ignores it runs on until seal/close."""
        self.close_stdin()


def _make_writable_and_retry(function, path, _exc) -> None:
    """rmtree's error hook: the agent may have left read-only folders behind."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        os.chmod(path, 0o700)
        function(path)
