"""One conformance suite, two servers: real Mattermost and our Mattermost-compatible service.

`chat_conformance.py` drives the server with the official Python driver `mattermostautodriver`
(from PyPI, pinned below) and raw HTTP: logins, posts (create / get / edit / patch / delete /
pin), threads (collapsed threads, thread paging), paging, search, reactions, files (public link,
thumbnail, preview), users, channel members, views, statuses, DMs and group messages, client
config, headers, error bodies, bad input and the WebSocket event stream (authentication
challenge, hello, posted / post_edited / post_deleted). The sandbox has no network
and the host cannot reach its server, so the script runs inside the container with the image's
Python; the driver's wheels (and its dependencies', for that Python) are downloaded on the host
once, cached under .egym/cache/, unpacked and copied in.

Every check must pass on both servers: the real server is the reference (a check it fails is a
wrong check), and a difference of ours is a bug to fix in mcp_wrappers/mattermost_compat/ unless
it is listed in COMPAT_DIFFERENCES (documented in docs/chat.md).
Needs both images (`bash images/build.sh && bash images/mattermost/build.sh`).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from mcp_wrappers import PYTHON
from tests.mcp_wrappers.chat_support import chat_overlay

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DRIVER = "mattermostautodriver==11.11.1"
CONTAINER_PYTHON = "3.11"  # the image's /opt/egym/venv (Debian 12)
CACHE = Path(os.environ.get("EGYM_HOME", ".egym")) / "cache"
SCRIPT = Path(__file__).with_name("chat_conformance.py")
CHECK_NAMES = [
    line.split("(")[0].removeprefix("async ").removeprefix("def ")
    for previous, line in zip(
        SCRIPT.read_text().splitlines(), SCRIPT.read_text().splitlines()[1:], strict=False
    )
    if previous in ("@check", "@ws_check")
]
# check -> why our service deliberately answers otherwise (each one is in docs/chat.md)
COMPAT_DIFFERENCES: dict[str, str] = {}


def driver_site() -> Path:
    """The driver and its dependencies for the container's Python, unpacked in one folder (cached)."""
    key = hashlib.sha256(f"{DRIVER} {CONTAINER_PYTHON}".encode()).hexdigest()[:12]
    root = (CACHE / f"mattermostautodriver-{key}").resolve()
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "mattermostautodriver.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / ".complete").exists():
            return root / "site"
        wheels = root / "wheels"
        platforms = ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64"]
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", DRIVER,
             "--only-binary=:all:", "--implementation", "cp", "--python-version", CONTAINER_PYTHON,
             *[arg for p in platforms for arg in ("--platform", p)], "-d", str(wheels)],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"pip download {DRIVER}: {done.stderr.strip()[-1500:]}")
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(root / "site")
        (root / ".complete").touch()
    return root / "site"


def _tar(folder: Path, name: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=name)
    return buf.getvalue()


@pytest.fixture(scope="module", params=["real", "compat"])
def results(request) -> tuple[str, dict[str, str]]:
    """Start the server's image with the test chat files, run every check once, return their outcomes."""
    from gym.sandbox import DockerSandbox
    from gym.sandbox.docker_client import CHAT_IMAGES

    site = driver_site()
    sandbox = DockerSandbox.start(
        CHAT_IMAGES[request.param],
        apps=("postgres", "chat"),
        overlay=chat_overlay(),
        run_id="pytest-chat-conformance",
    )
    try:
        sandbox.container.put_archive("/tmp", _tar(site, "mmdriver"))
        sandbox.write_file("/tmp/chat_conformance.py", SCRIPT.read_bytes(), user="root")
        # -I (isolated) as every root command in a sandbox; the driver's folder goes on sys.path by hand
        boot = "import runpy, sys; sys.path.insert(0, '/tmp/mmdriver'); runpy.run_path(sys.argv[1], run_name='__main__')"
        run = sandbox.exec([*PYTHON, "-c", boot, "/tmp/chat_conformance.py"], user="root", timeout=300)
        assert run.ok, run.output[-3000:]
        return request.param, json.loads(run.output.strip().splitlines()[-1])
    finally:
        sandbox.close()


def test_the_script_ran_every_check(results):
    server, outcomes = results
    assert list(outcomes) == CHECK_NAMES, server


@pytest.mark.parametrize("check", CHECK_NAMES)
def test_conformance(results, check):
    server, outcomes = results
    if server == "compat" and check in COMPAT_DIFFERENCES:
        pytest.xfail(COMPAT_DIFFERENCES[check])
    assert outcomes[check] == "pass", f"{server}: {outcomes[check]}"
