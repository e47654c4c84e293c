"""The grading half of a Harbor task folder: runs in the task's container as `tests/verify.py`.

`egym export --format harbor` copies this file, egym's `core` and `grader` packages and
the instance's rubric into the folder's `tests/`, which Harbor copies into the container
only after the agent has finished. `tests/test.sh` first ends the agent's episode
(`/opt/egym/bin/end-episode`, as `Sandbox.seal` does), then runs this script as root with
the image's isolated interpreter. It grades with egym's own `grade_async` and
`SandboxProbe`: the probe's readers (psql, the chat snapshot, the document reader) run
as OS user `grader` exactly as in an egym rollout; only the transport differs: a
subprocess in this container (`ContainerSandbox`) instead of `docker exec` from the host.

It writes `grade.json` (the whole Grade, items included) and, when the grade is
complete, the normalised score to `reward.txt`. An incomplete grade (an item that could
not be graded, e.g. a judge item with no judge) writes no reward and exits 2: Harbor then
records a verifier error for the trial, never a reward of 0.

Imports only `core`, `grader` and the standard library (no `gym`): nothing else is in the container.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import signal
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent  # the container's /tests
sys.path.insert(0, str(ROOT / "egym"))  # core/, grader/ and the rubric's check modules

from core.trajectory import Message, Trajectory  # noqa: E402
from grader.loader import load_rubric  # noqa: E402
from grader.probe import SandboxProbe  # noqa: E402
from grader.score import grade_async  # noqa: E402

ANSWER_FILE = "/home/agent/answer.txt"  # where instruction.md tells the agent to write its final message
MAX_ANSWER_BYTES = 1 << 20
LOGS = Path(os.environ.get("EGYM_VERIFIER_LOGS", "/logs/verifier"))


class FileTooLarge(OSError):
    """Over the size the grader reads (an OSError, as gym.sandbox.docker_sandbox's)."""


class ContainerSandbox:
    """gym.sandbox.base.Sandbox inside the container itself, for SandboxProbe: exec, files, stdio.

    Runs as root; commands for another user drop to it with setpriv, as egym-init does.
    """

    id = "harbor-container"

    def exec(self, cmd, *, timeout=60, user="root", cwd=None, env=None, max_output=16 << 20):
        argv = _as_user(["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd), user)
        proc = subprocess.Popen(
            argv,
            cwd=cwd or "/",
            env=_env(user, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the timeout kills the whole group, children too
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
            code, timed_out = proc.returncode, False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            code, timed_out = 124, True
        return _Result(code, out[:max_output].decode(errors="replace"), timed_out, len(out) > max_output)

    def read_file(self, path: str, *, max_bytes: int = 64 << 20) -> bytes:
        """A regular file's bytes; a symlink, folder or FIFO is IsADirectoryError, as through the Docker API."""
        info = os.lstat(path)  # FileNotFoundError when absent
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(path)
        if info.st_size > max_bytes:
            raise FileTooLarge(f"{path} has {info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise FileTooLarge(f"{path} is over the {max_bytes:,}-byte limit")
        return data

    def write_file(self, path: str, data: bytes, *, user: str = "root", mode: int = 0o644) -> None:
        entry = pwd.getpwnam(user)
        target = Path(path)
        missing = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in missing:
            os.chown(folder, entry.pw_uid, entry.pw_gid)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chown(target, entry.pw_uid, entry.pw_gid)

    def open_stdio(self, cmd: list[str], *, user: str = "root", env=None) -> _Stdio:
        proc = subprocess.Popen(
            _as_user(list(cmd), user),
            cwd="/",
            env=_env(user, env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return _Stdio(proc)

    def seal(self) -> str:
        return "sealed by test.sh"  # end-episode ran before this script (and before anything was read)

    def close(self) -> None:
        pass


class _Result:
    def __init__(self, exit_code: int, output: str, timed_out: bool, truncated: bool):
        self.exit_code, self.output, self.timed_out, self.truncated = exit_code, output, timed_out, truncated

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class _Stdio:
    def __init__(self, proc: subprocess.Popen):
        self.proc = proc

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, max_bytes: int = 65536) -> bytes:
        return os.read(self.proc.stdout.fileno(), max_bytes)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _as_user(argv: list[str], user: str) -> list[str]:
    if user == "root":
        return argv
    return ["/usr/bin/setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *argv]


def _env(user: str, extra: dict[str, str] | None) -> dict[str, str]:
    """The container's environment as `docker exec -u USER` gives it: the image's ENV, that user's HOME."""
    entry = pwd.getpwnam(user)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PGHOST", "PGDATABASE")}
    return {**keep, "HOME": entry.pw_dir, "USER": user, **(extra or {})}


def final_answer(sandbox: ContainerSandbox) -> str | None:
    """The agent's final message from ANSWER_FILE (None when it wrote none)."""
    try:
        return sandbox.read_file(ANSWER_FILE, max_bytes=MAX_ANSWER_BYTES).decode(errors="replace").strip()
    except (FileNotFoundError, IsADirectoryError):
        return None


def trajectory_of(task: str, answer: str | None) -> Trajectory:
    """What the grader knows of a Harbor agent's episode: its final answer (Harbor keeps the transcript)."""
    messages = [Message(role="assistant", content=answer)] if answer is not None else []
    return Trajectory(
        task=task,
        policy="harbor",
        messages=messages,
        final_answer=answer,
        stop_reason="answered" if answer is not None else None,
    )


async def verify(rubric_path: Path, initial_rows_path: Path, logs: Path) -> int:
    rubric = load_rubric(rubric_path)
    rows = json.loads(initial_rows_path.read_text()) if initial_rows_path.is_file() else None
    sandbox = ContainerSandbox()
    trajectory = trajectory_of(rubric.task, final_answer(sandbox))
    with SandboxProbe(sandbox) as probe:
        grade = await grade_async(rubric, probe, trajectory, judge=None, initial_rows=rows)
    grade.meta["answer_file"] = ANSWER_FILE if trajectory.final_answer is not None else None
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "grade.json").write_text(grade.model_dump_json(indent=1))
    print(grade.summary())
    if grade.incomplete:
        print(f"egym: {grade.incomplete_note()}: no reward written (an incomplete grade is not a 0)")
        return 2
    (logs / "reward.txt").write_text(f"{grade.normalized!r}\n")
    return 0


def main(argv: list[str]) -> int:
    """verify.py RUBRIC: the rubric's path relative to tests/egym (e.g. rubrics/acme/x.json)."""
    return asyncio.run(verify(ROOT / "egym" / argv[0], ROOT / "initial_rows.json", LOGS))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
