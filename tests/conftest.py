"""Shared fixtures. Tests that need Docker use the real engine and the egym/world image.

`make test` builds the image first; when the engine or image is missing the
tests fail with the fix in the message (they never skip silently).

Every test that uses Docker carries `@pytest.mark.docker`, so `make test-fast`
(`-m "not docker and not model and not slow"`) runs without an engine. The rule
is enforced below, not just documented: while an unmarked test (or the fixtures
it sets up) runs, starting a sandbox or making any request to a Docker engine
fails the test with "mark this test @pytest.mark.docker", and subprocesses it
starts see a DOCKER_HOST that points nowhere. Likewise the bundled model needs
`@pytest.mark.model`.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from core.errors import SandboxError

# What an unmarked test's subprocesses see (an `egym` CLI run, say): an engine that is not there.
UNMARKED_DOCKER_HOST = "unix:///nonexistent/egym-unmarked-test--mark-it-pytest.mark.docker.sock"


@pytest.fixture(scope="session")
def docker_image() -> str:
    from gym.sandbox.docker_client import default_image, require_image

    try:
        require_image(default_image())
    except SandboxError as exc:
        pytest.fail(f"{exc} (run `make setup`)", pytrace=False)
    return default_image()


@pytest.fixture
def sandbox(docker_image):
    """A fresh container with PostgreSQL running; removed after the test."""
    from gym.sandbox import DockerSandbox

    sb = DockerSandbox.start(docker_image, run_id="pytest")
    yield sb
    sb.close()


# -- the docker and model markers, enforced ---------------------------------------------------------


class _MarkerGuard:
    """Refuses a resource while a test without its marker (or the fixtures it sets up) runs.

    Hooks, not a function-scoped autouse fixture: module- and session-scoped
    fixtures (a shared container) are set up before any function-scoped fixture
    and must be caught too. Teardown is not guarded, so a shared container that a
    marked test started may still be removed after an unmarked neighbour.
    """

    def __init__(self, marker: str, install) -> None:
        self.marker = marker
        self.hint = f"mark this test @pytest.mark.{marker}"
        self._install = install
        self.allowed = True
        self.violations: list[str] = []
        self.installed = False

    def check(self, what: str) -> None:
        if not self.allowed:
            message = f"{what}: {self.hint} (tests/conftest.py enforces it)"
            self.violations.append(message)
            pytest.fail(message, pytrace=False)

    @contextlib.contextmanager
    def phase(self, item: pytest.Item, env: dict[str, str] | None = None):
        if item.get_closest_marker(self.marker) is not None:
            yield
            return
        if not self.installed:
            self._install(self)
            self.installed = True
        saved = {name: os.environ.get(name) for name in env or {}}
        self.allowed, self.violations = False, []
        os.environ.update(env or {})
        try:
            yield
        finally:
            self.allowed = True
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        if self.violations:  # refused, but the code under test caught it (a batch records errors): still fail
            pytest.fail(self.violations[0], pytrace=False)


def _refuse_docker(guard: _MarkerGuard) -> None:
    """DockerSandbox.start, and the docker SDK's one HTTP entry point: every request, every container or build."""
    import docker.api.client

    from gym.sandbox.docker_sandbox import DockerSandbox

    start = DockerSandbox.__dict__["start"].__func__
    send = docker.api.client.APIClient.send

    def guarded_start(cls, *args, **kwargs):
        guard.check("DockerSandbox.start needs a Docker engine")
        return start(cls, *args, **kwargs)

    def guarded_send(self, request, **kwargs):
        guard.check(f"docker API {request.method} {request.path_url.split('?')[0]} needs a Docker engine")
        return send(self, request, **kwargs)

    DockerSandbox.start = classmethod(guarded_start)
    docker.api.client.APIClient.send = guarded_send


def _refuse_bundled_model(guard: _MarkerGuard) -> None:
    """The bundled model's file: every resolve_model/import_model of a bundled name goes through it."""
    import gym.models.store as store

    locate = store.bundled_gguf

    def guarded(name: str):
        guard.check(f"the bundled model '{name}'")
        return locate(name)

    store.bundled_gguf = guarded


_docker_guard = _MarkerGuard("docker", _refuse_docker)
_model_guard = _MarkerGuard("model", _refuse_bundled_model)


@contextlib.contextmanager
def _guarded(item: pytest.Item):
    # Subprocesses of an unmarked test (an `egym` CLI run) see an engine that is not there.
    with _docker_guard.phase(item, {"DOCKER_HOST": UNMARKED_DOCKER_HOST}), _model_guard.phase(item):
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _guarded(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _guarded(item):
        return (yield)


@pytest.fixture(autouse=True)
def _rollout_image_unchanged():
    """A test that leaves EGYM_IMAGE changed (select_chat sets it) would move every later test onto
    another image: it fails here instead, by name."""
    before = os.environ.get("EGYM_IMAGE")
    yield
    assert os.environ.get("EGYM_IMAGE") == before, "this test changed EGYM_IMAGE: use monkeypatch.setenv"
