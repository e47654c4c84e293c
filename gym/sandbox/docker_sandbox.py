"""DockerSandbox: one isolated container per rollout, driven through `docker exec` only.

The host never talks to the container over the network (it has none); every
interaction is an exec, an archive copy, or an exec's stdin/stdout stream.
"""

from __future__ import annotations

import contextlib
import io
import queue
import secrets
import shlex
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

import docker.errors

from core.errors import SandboxError
from core.owner import owner_label
from gym.sandbox.base import ExecResult
from gym.sandbox.docker_client import LABEL, client, default_image, require_image
from gym.sandbox.privilege import AGENT, UIDS, privileged_command
from gym.sandbox.stdio import DockerStdio

# Root inside the container needs these to start PostgreSQL and the chat
# service as their own users and to hand the initial files to `agent`; everything
# else is dropped. Agent commands run as a non-root user and get none of them.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"]
TIMEOUT_EXIT_CODES = (124, 137)  # coreutils `timeout`: TERM sent / KILL sent
AS_AGENT = "/opt/egym/bin/as-agent"  # the agent's process limit and OOM priority (images/world/bin/)
END_EPISODE = ["/opt/egym/bin/end-episode"]
MKDIR = ["/bin/mkdir", "-p", "--"]
# Each sandbox's agent gets a uid of its own from this range (see images/world/bin/egym-init).
AGENT_UIDS = (100_000_000, 1_000_000_000)
MAX_EXEC_OUTPUT = 16 << 20
EXEC_SOCKET_GRACE_S = 30  # past a command's timeout (and `timeout -k 2`), how long to wait for Docker
MAX_FILE_BYTES = 64 << 20


@dataclass(frozen=True)
class SandboxLimits:
    memory: str = "2g"
    cpus: float = 1.0
    pids: int = 1024
    agent_pids: int = 256  # the agent's share of `pids`; the rest stays for the apps and the grader
    ready_timeout_s: float = 90.0


class DockerSandbox:
    """A running rollout container. Create with `DockerSandbox.start(...)`; always `close()`."""

    def __init__(self, container, run_id: str, rollout_id: str, agent_uid: int):
        self.container = container
        self.id = container.id
        self.run_id = run_id
        self.rollout_id = rollout_id
        self.agent_uid = agent_uid
        self.sealed = False  # set by seal(): the agent's episode is over
        # What the sandbox was made from: sandboxes of one image offer the same MCP tools (harness.toolbox).
        self.image_id: str | None = container.attrs.get("Image")
        self._api = client().api

    # -- life cycle -------------------------------------------------------

    @classmethod
    def start(
        cls,
        image: str | None = None,
        *,
        apps: tuple[str, ...] | list[str] = ("db",),
        overlay: bytes | None = None,
        run_id: str = "adhoc",
        rollout_id: str | None = None,
        limits: SandboxLimits = SandboxLimits(),
    ) -> DockerSandbox:
        """Start a container from `image` (default: default_image()), apply `overlay` (see overlay.overlay_tar),
        wait until its apps answer."""
        image = image or default_image()
        require_image(image)
        rollout_id = rollout_id or uuid.uuid4().hex[:12]
        agent_uid = AGENT_UIDS[0] + secrets.randbelow(AGENT_UIDS[1] - AGENT_UIDS[0])
        try:
            container = client().containers.create(
                image,
                detach=True,
                init=True,
                network_mode="none",
                cap_drop=["ALL"],
                cap_add=CAPABILITIES,
                security_opt=["no-new-privileges"],
                pids_limit=limits.pids,
                mem_limit=limits.memory,
                memswap_limit=limits.memory,
                nano_cpus=int(limits.cpus * 1e9),
                hostname="workstation",
                environment={
                    "EGYM_APPS": ",".join(apps),
                    "EGYM_AGENT_UID": str(agent_uid),
                    "EGYM_AGENT_NPROC": str(limits.agent_pids),
                },
                labels={
                    LABEL: "1",
                    "egym.run": run_id,
                    "egym.rollout": rollout_id,
                    "egym.owner": owner_label(),
                },
            )
        except docker.errors.APIError as exc:
            raise SandboxError(
                f"could not create a container from '{image}': {exc.explanation or exc}"
            ) from None
        sandbox = cls(container, run_id, rollout_id, agent_uid)
        try:
            if overlay:
                container.put_archive("/egym/overlay", overlay)
            container.start()
            sandbox._wait_ready(limits.ready_timeout_s)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def _wait_ready(self, timeout: float) -> None:
        """Follow the container's log until egym-init says READY or ERROR."""
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            try:
                buf = b""
                for chunk in self.container.logs(stream=True, follow=True):
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        lines.put(line.decode(errors="replace"))
            except Exception:  # noqa: BLE001 - the container went away; reported below
                pass
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise SandboxError(f"container {self.id[:12]} not ready after {timeout:.0f}s") from None
            if line is None:
                raise SandboxError(f"container {self.id[:12]} exited during start-up: {self._exit_hint()}")
            if line.startswith("EGYM READY"):
                return
            if line.startswith("EGYM ERROR"):
                raise SandboxError(line.removeprefix("EGYM ERROR").strip())

    def _exit_hint(self) -> str:
        try:
            tail = self.container.logs(tail=3).decode(errors="replace").strip().replace("\n", " | ")
        except docker.errors.APIError:
            tail = ""
        return tail or "no output"

    def close(self) -> None:
        """Remove the container (and its anonymous volumes). Safe to call twice."""
        try:
            self.container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise SandboxError(f"could not remove container {self.id[:12]}: {exc}") from None

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def seal(self) -> str:
        """End the agent's episode: stop every agent process and database session; refuse agent commands after.

        Called before the grader reads anything, so nothing the agent left running
        (a background job, a fork bomb, a query holding a lock) can change or block
        what is graded. Returns what was stopped ("ended: N processes, M database sessions").
        """
        self.sealed = True
        result = self.exec(END_EPISODE, user="root", timeout=30)
        if not result.ok:
            raise SandboxError(
                f"could not end the agent's episode in {self.id[:12]}: {result.output.strip()[-300:]}"
            )
        return result.output.strip()

    # -- commands ----------------------------------------------------------

    def _command(self, cmd: str | list[str], user: str, cwd: str | None) -> tuple[list[str], str | None]:
        """The argv to run (agent commands go through as-agent; others must pass the privilege rules)."""
        if user != AGENT:
            return privileged_command(cmd, cwd, user)
        if self.sealed:
            raise SandboxError(f"the agent's episode in {self.id[:12]} has ended: no more agent commands")
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return [AS_AGENT, *argv], cwd

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
        argv, cwd = self._command(cmd, user, cwd)
        # `timeout` kills the whole process group, so children die with the command.
        wrapped = ["/usr/bin/timeout", "-k", "2", f"{timeout:g}", *argv]
        started = time.monotonic()
        kept: list[bytes] = []
        size, truncated = 0, False
        try:
            exec_id = self._api.exec_create(
                self.id, wrapped, user=user, workdir=cwd, environment=env, stdout=True, stderr=True
            )["Id"]
            # Read everything (the process must not block on a full pipe), keep at most max_output bytes.
            for chunk in self._exec_output(exec_id, read_timeout=timeout + EXEC_SOCKET_GRACE_S):
                room = max_output - size
                truncated = truncated or len(chunk) > room
                if room > 0:
                    kept.append(chunk[:room])
                    size += len(kept[-1])
            code = self._api.exec_inspect(exec_id)["ExitCode"]
        except docker.errors.APIError as exc:
            raise SandboxError(f"exec in container {self.id[:12]} failed: {exc.explanation or exc}") from None
        except OSError as exc:  # the engine's socket: a read timeout, a reset (requests' errors are OSErrors)
            raise SandboxError(
                f"exec of {argv[0]} in container {self.id[:12]} got no answer from Docker "
                f"({type(exc).__name__}: {exc or 'timed out'})"
            ) from None
        seconds = time.monotonic() - started
        timed_out = code in TIMEOUT_EXIT_CODES and seconds >= timeout * 0.98
        output = b"".join(kept).decode(errors="replace")
        return ExecResult(code if code is not None else -1, output, timed_out, seconds, truncated)

    def _exec_attach(self, exec_id: str):
        """Start an exec attached: (the HTTP response, a buffered reader of the exec's frames).

        docker-py's exec_start reads the raw socket under the HTTP response, so output that
        reached the socket before the response headers were read sits in the response's
        buffer and is lost (docker-py #3332; seen here on a busy machine as a grader read
        that lost its first 8 KB). Frames are read through that buffer instead.
        """
        response = self._api._post_json(
            self._api._url("/exec/{0}/start", exec_id),
            headers={"Connection": "Upgrade", "Upgrade": "tcp"},
            data={"Tty": False, "Detach": False},
            stream=True,
        )
        try:
            self._api._raise_for_status(response)
        except BaseException:
            response.close()
            raise
        return response, response.raw._fp.fp  # http.client's buffered reader over the upgraded socket

    def _exec_output(self, exec_id: str, *, read_timeout: float) -> Iterator[bytes]:
        """Start an exec and yield its output (stdout and stderr frames, in order) until it ends.

        The socket waits `read_timeout` for each frame, not the client's 120 s: a silent command
        may legitimately run longer (its own `timeout` ends it), and past that a wait is Docker's trouble.
        """
        response, reader = self._exec_attach(exec_id)
        with contextlib.suppress(AttributeError, OSError):
            reader.raw._sock.settimeout(read_timeout)  # the SocketIO's socket (as in DockerStdio)
        try:
            while len(header := reader.read(8)) == 8:  # stream type, 3 zero bytes, payload size
                size = int.from_bytes(header[4:], "big")
                if size:
                    yield reader.read(size)
        finally:
            response.close()

    def open_stdio(
        self, cmd: list[str], *, user: str = AGENT, env: dict[str, str] | None = None
    ) -> DockerStdio:
        argv, cwd = self._command(cmd, user, None)
        try:
            exec_id = self._api.exec_create(
                self.id, argv, user=user, workdir=cwd, environment=env, stdin=True, stdout=True, stderr=True
            )["Id"]
            response, reader = self._exec_attach(exec_id)
        except docker.errors.APIError as exc:
            raise SandboxError(
                f"could not start {shlex.join(cmd)} in {self.id[:12]}: {exc.explanation or exc}"
            ) from None
        return DockerStdio(reader, response)

    # -- files ---------------------------------------------------------------

    def read_file(self, path: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        """A regular file's bytes (a symlink or directory raises IsADirectoryError); FileTooLarge past max_bytes."""
        try:
            stream, stat = self.container.get_archive(path)
        except docker.errors.NotFound:
            raise FileNotFoundError(path) from None
        if stat.get("size", 0) > max_bytes:
            stream.close()
            raise FileTooLarge(f"{path} has {stat['size']:,} bytes, over the {max_bytes:,}-byte limit")
        data = bytearray()
        for chunk in stream:
            data += chunk
            if len(data) > max_bytes + (1 << 20):  # the tar adds headers; the file itself is over the limit
                raise FileTooLarge(f"{path} is over the {max_bytes:,}-byte limit")
        with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise IsADirectoryError(path)
            return tar.extractfile(member).read()

    def write_file(self, path: str, data: bytes, *, user: str = AGENT, mode: int = 0o644) -> None:
        target = PurePosixPath(path)
        uid = self.agent_uid if user == AGENT else UIDS.get(user, 0)
        info = tarfile.TarInfo(target.name)
        info.size, info.mode, info.mtime, info.uid, info.gid = len(data), mode, int(time.time()), uid, uid
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.addfile(info, io.BytesIO(data))
        parent = str(target.parent)
        try:
            self.container.put_archive(parent, buf.getvalue())
        except docker.errors.NotFound:
            made = self.exec([*MKDIR, parent], user=user, timeout=10)
            if not made.ok:
                raise PermissionError(f"cannot create {parent}: {made.output.strip()}") from None
            self.container.put_archive(parent, buf.getvalue())


class FileTooLarge(OSError):
    """A file in the sandbox is over the size the host will read."""
