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

`chat_conformance.mjs` makes the calls of integrations written with the official JavaScript
client, `Client4` and `WebSocketClient` of the npm package `@mattermost/client` (pinned below),
in the same container: the package is installed from npm on the host once (cached under
.egym/cache/), and copied in with the host's `node` binary (it links only glibc and libstdc++,
which the image's Debian 12 has).

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
import re
import shutil
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

JS_CLIENT = "@mattermost/client@11.9.0"  # Client4; @mattermost/types (its peer) at the same version
JS_SCRIPT = Path(__file__).with_name("chat_conformance.mjs")
JS_CHECK_NAMES = re.findall(r"^check\('(\w+)'", JS_SCRIPT.read_text(), flags=re.M)


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
        pip = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", DRIVER]
        pip += ["--only-binary=:all:", "--implementation", "cp", "--python-version", CONTAINER_PYTHON]
        pip += [arg for p in platforms for arg in ("--platform", p)] + ["-d", str(wheels)]
        done = subprocess.run(pip, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"pip download {DRIVER}: {done.stderr.strip()[-1500:]}")
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(root / "site")
        (root / ".complete").touch()
    return root / "site"


def js_client_modules() -> Path:
    """node_modules with Client4 and its types, installed from npm on the host once (cached)."""
    version = JS_CLIENT.rsplit("@", 1)[1]
    root = (CACHE / f"npm-mattermost-client-{version}").resolve()
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "npm-mattermost-client.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".complete").exists():
            npm = shutil.which("npm")
            if npm is None:
                pytest.skip("npm is not on this machine: the JavaScript client cannot be installed")
            root.mkdir(parents=True, exist_ok=True)
            (root / "package.json").write_text('{"private": true}\n')
            install = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(root)]
            install += [JS_CLIENT, f"@mattermost/types@{version}"]
            done = subprocess.run(install, capture_output=True, text=True)
            if done.returncode != 0:
                pytest.fail(f"npm install {JS_CLIENT}: {done.stderr.strip()[-1500:]}")
            (root / ".complete").touch()
    return root / "node_modules"


def _tar(folder: Path, name: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=name)
    return buf.getvalue()


def _node_tar() -> bytes:
    """The host's Node (dynamically linked to glibc only, which the image's Debian 12 has), Client4 and the script."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on this machine: the JavaScript client's checks need it")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(os.path.realpath(node), arcname="mmjs/node")
        tar.add(js_client_modules(), arcname="mmjs/node_modules")
        tar.add(JS_SCRIPT, arcname=f"mmjs/{JS_SCRIPT.name}")
    return buf.getvalue()


@pytest.fixture(scope="module", params=["real", "compat"])
def chat_server(request):
    """The server's image started once with the test chat files, shared by the Python and JavaScript checks."""
    from gym.sandbox import DockerSandbox
    from gym.sandbox.docker_client import CHAT_IMAGES

    sandbox = DockerSandbox.start(
        CHAT_IMAGES[request.param],
        apps=("db", "chat"),
        overlay=chat_overlay(),
        run_id="pytest-chat-conformance",
    )
    try:
        yield request.param, sandbox
    finally:
        sandbox.close()


@pytest.fixture(scope="module")
def results(chat_server) -> tuple[str, dict[str, str]]:
    """Every check of chat_conformance.py run once: {check: "pass" | "fail: why"}."""
    name, sandbox = chat_server
    site = driver_site()
    sandbox.container.put_archive("/tmp", _tar(site, "mmdriver"))
    sandbox.write_file("/tmp/chat_conformance.py", SCRIPT.read_bytes(), user="root")
    # -I (isolated) as every root command in a sandbox; the driver's folder goes on sys.path by hand
    boot = "import runpy, sys; sys.path.insert(0, '/tmp/mmdriver'); runpy.run_path(sys.argv[1], run_name='__main__')"
    run = sandbox.exec([*PYTHON, "-c", boot, "/tmp/chat_conformance.py"], user="root", timeout=300)
    assert run.ok, run.output[-3000:]
    return name, json.loads(run.output.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def js_results(chat_server) -> tuple[str, dict[str, str]]:
    """Every check of chat_conformance.mjs (Client4) run once: {check: "pass" | "fail: why"}."""
    name, sandbox = chat_server
    sandbox.container.put_archive("/tmp", _node_tar())
    # Node 20 has a WebSocket client only behind this flag (on by default from Node 22)
    node = ["/tmp/mmjs/node", "--experimental-websocket", "--no-warnings"]
    run = sandbox.exec([*node, f"/tmp/mmjs/{JS_SCRIPT.name}"], user="root", timeout=120)
    assert run.ok, run.output[-3000:]
    lines = [json.loads(line) for line in run.output.splitlines() if line.startswith('{"name"')]
    return name, {line["name"]: "pass" if line["ok"] else f"fail: {line['detail']}" for line in lines}


def test_the_script_ran_every_check(results):
    server, outcomes = results
    assert list(outcomes) == CHECK_NAMES, server


@pytest.mark.parametrize("check", CHECK_NAMES)
def test_conformance(results, check):
    server, outcomes = results
    if server == "compat" and check in COMPAT_DIFFERENCES:
        pytest.xfail(COMPAT_DIFFERENCES[check])
    assert outcomes[check] == "pass", f"{server}: {outcomes[check]}"


def test_the_js_script_ran_every_check(js_results):
    server, outcomes = js_results
    assert list(outcomes) == JS_CHECK_NAMES, server


@pytest.mark.parametrize("check", JS_CHECK_NAMES)
def test_js_conformance(js_results, check):
    server, outcomes = js_results
    if server == "compat" and check in COMPAT_DIFFERENCES:
        pytest.xfail(COMPAT_DIFFERENCES[check])
    assert outcomes[check] == "pass", f"{server}: {outcomes[check]}"
