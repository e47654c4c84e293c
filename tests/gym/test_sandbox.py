"""DockerSandbox against the real engine and the egym/world image: no mocks."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.errors import SandboxError
from gym.sandbox import DockerSandbox, SandboxLimits
from gym.sandbox.docker_client import LABEL, client
from gym.sandbox.overlay import overlay_tar
from gym.tasks import Overlay

REPO = Path(__file__).resolve().parents[2]
EGYM = [sys.executable, "-m", "gym.cli"]


def egym_containers(**labels: str) -> list:
    filters = {"label": [LABEL, *(f"{k}={v}" for k, v in labels.items())]}
    return client().containers.list(all=True, filters=filters)


@pytest.fixture
def late_headers(monkeypatch) -> None:
    """The client reads each exec's HTTP response 0.3 s late, as a busy machine does: by then the
    process has written its first output, which waits behind the headers."""
    begin = http.client.HTTPResponse.begin

    def late_begin(response):
        time.sleep(0.3)
        return begin(response)

    monkeypatch.setattr(http.client.HTTPResponse, "begin", late_begin)


@pytest.mark.docker
def test_postgres_answers_inside_the_sandbox(sandbox):
    result = sandbox.exec("psql -Atc 'select 6 * 7'")
    assert result.ok, result.output
    assert result.output.strip() == "42"


@pytest.mark.docker
def test_postgres_listens_on_the_unix_socket_only(sandbox):
    result = sandbox.exec("psql -h 127.0.0.1 -Atc 'select 1'")
    assert result.exit_code != 0
    assert "Connection refused" in result.output or "could not connect" in result.output


@pytest.mark.docker
def test_a_file_written_in_one_exec_is_read_in_the_next(sandbox):
    assert sandbox.exec("echo persisted > /workspace/note.txt").ok
    assert sandbox.exec("cat /workspace/note.txt").output == "persisted\n"
    assert sandbox.read_file("/workspace/note.txt") == b"persisted\n"


@pytest.mark.docker
def test_write_file_creates_folders_owned_by_the_agent(sandbox):
    sandbox.write_file("/workspace/deep/er/file.csv", b"a,b\n1,2\n")
    listing = sandbox.exec("stat -c '%U %n' /workspace/deep/er/file.csv").output
    assert listing.strip() == "agent /workspace/deep/er/file.csv"
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("/workspace/missing.txt")


@pytest.mark.docker
def test_a_command_past_its_timeout_is_killed_and_reported(sandbox):
    result = sandbox.exec("echo started; sleep 30; echo never", timeout=1)
    assert result.timed_out
    assert "started" in result.output and "never" not in result.output
    # The killed command's children are gone too: nothing is left sleeping.
    assert "sleep 30" not in sandbox.exec("ps -eo args", user="root").output


@pytest.mark.docker
def test_docker_not_answering_an_exec_is_a_sandbox_error_not_a_bare_timeout(sandbox, monkeypatch):
    """The engine's socket waits a grace past the command's own timeout; past it: SandboxError, one line."""
    import gym.sandbox.docker_sandbox as docker_sandbox

    monkeypatch.setattr(docker_sandbox, "EXEC_SOCKET_GRACE_S", -1.5)  # the socket gives up before the command
    with pytest.raises(SandboxError, match="got no answer from Docker"):
        sandbox.exec("sleep 1.8; echo late", timeout=2)


@pytest.mark.docker
def test_exec_keeps_output_written_before_the_client_read_the_response(sandbox, request):
    """A busy client reads the exec's HTTP response late; the output is already buffered behind the headers."""
    whole = sandbox.exec("cat /etc/services").output
    request.getfixturevalue("late_headers")  # from here on
    again = sandbox.exec("cat /etc/services")
    assert again.ok and len(whole) > 10_000 and again.output == whole  # docker-py's own read lost 8 KB


@pytest.mark.docker
def test_exec_passes_user_cwd_and_env(sandbox):
    result = sandbox.exec("echo $(whoami) $(pwd) $GREETING", cwd="/tmp", env={"GREETING": "hi"})
    assert result.output.strip() == "agent /tmp hi"
    assert sandbox.exec("whoami", user="root").output.strip() == "root"


@pytest.mark.docker
def test_the_container_has_no_network(sandbox):
    assert sandbox.exec("getent hosts deb.debian.org").exit_code != 0
    connect = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\""
    result = sandbox.exec(connect)
    assert result.exit_code != 0
    assert "unreachable" in result.output.lower()


@pytest.mark.docker
def test_the_agent_cannot_read_root_only_paths(sandbox):
    for cmd in ("cat /etc/shadow", "ls /egym", "ls /var/lib/postgresql/15/main"):
        result = sandbox.exec(cmd)
        assert result.exit_code != 0, cmd
        assert "Permission denied" in result.output, cmd
    # ... nor become root, nor connect to the database as the superuser.
    assert sandbox.exec("su -c id root </dev/null").exit_code != 0
    assert "Peer authentication failed" in sandbox.exec("psql -U postgres -c 'select 1'").output


@pytest.mark.docker
def test_a_fork_bomb_is_contained_by_the_pids_limit(docker_image):
    sb = DockerSandbox.start(docker_image, run_id="pytest-bomb", limits=SandboxLimits(pids=128))
    try:
        bomb = sb.exec("bomb() { bomb | bomb & }; bomb; sleep 3", timeout=5)
        assert "fork: retry: Resource temporarily unavailable" in bomb.output
        pids = sb.container.stats(stream=False)["pids_stats"]
        assert pids["limit"] == 128 and pids["current"] <= 128
    finally:
        sb.close()  # removing the container ends the bomb
    assert egym_containers(**{"egym.run": "pytest-bomb"}) == []
    with DockerSandbox.start(docker_image, run_id="pytest-bomb") as fresh:
        assert fresh.exec("psql -Atc 'select 1'").output.strip() == "1"


@pytest.mark.docker
def test_two_sandboxes_do_not_see_each_others_writes(docker_image):
    with (
        DockerSandbox.start(docker_image, run_id="pytest") as a,
        DockerSandbox.start(docker_image, run_id="pytest") as b,
    ):
        assert a.exec(
            "echo mine > /workspace/a.txt && psql -c 'create table only_in_a(x int)'", user="agent"
        ).exit_code in (0, 1)
        a.exec("psql -c 'create table only_in_a(x int)'", user="postgres")
        assert b.exec("test -e /workspace/a.txt").exit_code == 1
        assert b.exec("psql -Atc \"select to_regclass('only_in_a')\"", user="postgres").output.strip() == ""
        assert (
            a.exec("psql -Atc \"select to_regclass('only_in_a')\"", user="postgres").output.strip()
            == "only_in_a"
        )


def read_line(stream) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = stream.read()
        assert chunk, f"stream ended after {data!r}"
        data += chunk
    return data


@pytest.mark.docker
def test_open_stdio_is_a_bidirectional_stream(sandbox):
    stream = sandbox.open_stdio(
        ["python3", "-u", "-c", "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"]
    )
    try:
        stream.write(b"hello\n")
        assert read_line(stream) == b"HELLO\n"
        stream.write(b"again\n")
        assert read_line(stream) == b"AGAIN\n"
    finally:
        stream.close()


@pytest.mark.docker
@pytest.mark.timeout(60)  # with the greeting lost, the first read would wait for ever
def test_open_stdio_keeps_what_the_process_wrote_before_the_client_read_the_response(sandbox, late_headers):
    """A process that speaks first (or dies at start with a traceback) is heard on a busy client too."""
    script = "import sys\nprint('ready', flush=True)\nprint('started', file=sys.stderr, flush=True)\n"
    script += "for line in sys.stdin: print(line.strip().upper(), flush=True)"
    stream = sandbox.open_stdio(["python3", "-u", "-c", script])
    try:
        assert read_line(stream) == b"ready\n"  # docker-py's socket read lost it
        stream.write(b"hello\n")
        assert read_line(stream) == b"HELLO\n"
        assert stream.stderr_tail == b"started\n"  # its frame came between the two lines
    finally:
        stream.close()


@pytest.mark.docker
def test_overlay_applies_sql_and_workspace(docker_image, tmp_path):
    (tmp_path / "data.sql").write_text(
        "create table customers(name text); insert into customers values ('Ada');"
        "grant select on customers to agent;"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.txt").write_text("welcome")
    overlay = overlay_tar((Overlay(sql=["data.sql"], workspace="docs"), tmp_path))
    with DockerSandbox.start(docker_image, overlay=overlay, run_id="pytest") as sb:
        assert sb.exec("psql -Atc 'select name from customers'").output.strip() == "Ada"
        assert (
            sb.exec("stat -c '%U' /workspace/readme.txt && cat /workspace/readme.txt").output
            == "agent\nwelcome"
        )
        # The overlay itself is gone once applied.
        assert sb.exec("ls /egym/overlay", user="root").output.strip() == ""


@pytest.mark.docker
def test_close_leaves_no_container_behind(docker_image):
    sb = DockerSandbox.start(docker_image, run_id="pytest-close")
    assert len(egym_containers(**{"egym.run": "pytest-close"})) == 1
    sb.close()
    sb.close()  # idempotent
    assert egym_containers(**{"egym.run": "pytest-close"}) == []


@pytest.mark.docker
def test_gc_reaps_a_container_whose_owner_died(docker_image):
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
            import time
            from gym.sandbox import DockerSandbox
            DockerSandbox.start(run_id="pytest-orphan")
            print("started", flush=True)
            time.sleep(600)
        """),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout.readline().strip() == "started"
    survivor = DockerSandbox.start(docker_image, run_id="pytest-orphan")  # owned by this live process
    try:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        assert len(egym_containers(**{"egym.run": "pytest-orphan"})) == 2
        gc = subprocess.run([*EGYM, "gc"], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert gc.returncode == 0, gc.stderr
        left = egym_containers(**{"egym.run": "pytest-orphan"})
        assert [c.id for c in left] == [survivor.id]
    finally:
        survivor.close()


# -- bad input: one clear line, no container left -------------------------------


@pytest.mark.docker
def test_unknown_image_is_one_clear_line():
    with pytest.raises(SandboxError) as err:
        DockerSandbox.start("egym/does-not-exist:latest", run_id="pytest-bad")
    assert "egym/does-not-exist:latest" in str(err.value) and "make images" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.docker
def test_a_seed_file_that_fails_names_the_file_and_leaves_nothing(docker_image, tmp_path):
    (tmp_path / "broken.sql").write_text("create table ok(x int);\nselect * from no_such_table;\n")
    overlay = overlay_tar((Overlay(sql=["broken.sql"]), tmp_path))
    with pytest.raises(SandboxError) as err:
        DockerSandbox.start(docker_image, overlay=overlay, run_id="pytest-badseed")
    message = str(err.value)
    assert "broken.sql" in message and "no_such_table" in message and "\n" not in message
    assert egym_containers(**{"egym.run": "pytest-badseed"}) == []


def test_docker_not_reachable_is_one_clear_line(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
    gc = subprocess.run([*EGYM, "gc"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert gc.returncode == 2
    lines = gc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Docker engine not reachable" in lines[0] and "make setup" in lines[0]
    assert "Traceback" not in gc.stderr
