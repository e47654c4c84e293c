"""DockerSandbox: one isolated container per rollout, driven through `docker exec` only.

The host never talks to the container over the network (it has none); every
interaction is an exec, an archive copy, or an exec's stdin/stdout stream.
"""

from __future__ import annotations

import io
import queue
import shlex
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import PurePosixPath

import docker.errors

from gym.errors import SandboxError
from gym.sandbox.base import ExecResult
from gym.sandbox.docker_client import DEFAULT_IMAGE, LABEL, client, require_image
from gym.sandbox.owner import owner_label
from gym.sandbox.stdio import DockerStdio

# Root inside the container needs these to start PostgreSQL and the chat
# service as their own users and to hand seeded files to `agent`; everything
# else is dropped. Agent commands run as a non-root user and get none of them.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"]
UIDS = {"root": 0, "agent": 1000}
TIMEOUT_EXIT_CODES = (124, 137)  # coreutils `timeout`: TERM sent / KILL sent


@dataclass(frozen=True)
class SandboxLimits:
    memory: str = "2g"
    cpus: float = 1.0
    pids: int = 512
    ready_timeout_s: float = 90.0


class DockerSandbox:
    """A running rollout container. Create with `DockerSandbox.start(...)`; always `close()`."""

    def __init__(self, container, run_id: str, rollout_id: str):
        self.container = container
        self.id = container.id
        self.run_id = run_id
        self.rollout_id = rollout_id
        self._api = client().api

    # -- life cycle -------------------------------------------------------

    @classmethod
    def start(
        cls,
        image: str = DEFAULT_IMAGE,
        *,
        apps: tuple[str, ...] | list[str] = ("postgres",),
        overlay: bytes | None = None,
        run_id: str = "adhoc",
        rollout_id: str | None = None,
        limits: SandboxLimits = SandboxLimits(),
    ) -> DockerSandbox:
        """Start a container from `image`, apply `overlay` (see overlay.overlay_tar), wait until its apps answer."""
        require_image(image)
        rollout_id = rollout_id or uuid.uuid4().hex[:12]
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
                environment={"EGYM_APPS": ",".join(apps)},
                labels={
                    LABEL: "1",
                    "egym.run": run_id,
                    "egym.rollout": rollout_id,
                    "egym.owner": owner_label(),
                },
            )
        except docker.errors.APIError as exc:
            raise SandboxError(f"could not create a container from '{image}': {exc.explanation or exc}") from None
        sandbox = cls(container, run_id, rollout_id)
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

    # -- commands ----------------------------------------------------------

    def exec(
        self,
        cmd: str | list[str],
        *,
        timeout: float = 60,
        user: str = "agent",
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        # `timeout` kills the whole process group, so children die with the command.
        wrapped = ["timeout", "-k", "2", f"{timeout:g}", *argv]
        started = time.monotonic()
        try:
            exec_id = self._api.exec_create(
                self.id, wrapped, user=user, workdir=cwd, environment=env, stdout=True, stderr=True
            )["Id"]
            raw = self._api.exec_start(exec_id)
            code = self._api.exec_inspect(exec_id)["ExitCode"]
        except docker.errors.APIError as exc:
            raise SandboxError(f"exec in container {self.id[:12]} failed: {exc.explanation or exc}") from None
        seconds = time.monotonic() - started
        timed_out = code in TIMEOUT_EXIT_CODES and seconds >= timeout * 0.98
        return ExecResult(code if code is not None else -1, raw.decode(errors="replace"), timed_out, seconds)

    def open_stdio(self, cmd: list[str], *, user: str = "agent", env: dict[str, str] | None = None) -> DockerStdio:
        try:
            exec_id = self._api.exec_create(self.id, cmd, user=user, environment=env, stdin=True, stdout=True, stderr=True)
            sock = self._api.exec_start(exec_id, socket=True)
        except docker.errors.APIError as exc:
            raise SandboxError(f"could not start {shlex.join(cmd)} in {self.id[:12]}: {exc.explanation or exc}") from None
        return DockerStdio(sock)

    # -- files ---------------------------------------------------------------

    def read_file(self, path: str) -> bytes:
        try:
            stream, _ = self.container.get_archive(path)
        except docker.errors.NotFound:
            raise FileNotFoundError(path) from None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise IsADirectoryError(path)
            return tar.extractfile(member).read()

    def write_file(self, path: str, data: bytes, *, user: str = "agent", mode: int = 0o644) -> None:
        target = PurePosixPath(path)
        uid = UIDS.get(user, 0)
        info = tarfile.TarInfo(target.name)
        info.size, info.mode, info.mtime, info.uid, info.gid = len(data), mode, int(time.time()), uid, uid
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.addfile(info, io.BytesIO(data))
        parent = str(target.parent)
        try:
            self.container.put_archive(parent, buf.getvalue())
        except docker.errors.NotFound:
            made = self.exec(["mkdir", "-p", parent], user=user, timeout=10)
            if not made.ok:
                raise PermissionError(f"cannot create {parent}: {made.output.strip()}") from None
            self.container.put_archive(parent, buf.getvalue())
