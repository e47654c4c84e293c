"""The marker rule of tests/conftest.py: a test without `docker` cannot reach Docker, one without `model`
cannot load the bundled model. (These tests carry neither, so they run in `make test-fast`.)"""

from __future__ import annotations

import contextlib
import os

import pytest

from tests import conftest


@contextlib.contextmanager
def provoked():
    """Refusals provoked on purpose: forget them, or the guard fails this test when its call ends."""
    try:
        yield conftest._docker_guard, conftest._model_guard
    finally:
        conftest._docker_guard.violations.clear()
        conftest._model_guard.violations.clear()


def test_an_unmarked_test_cannot_start_a_container_or_talk_to_the_engine():
    import docker

    from gym.sandbox import DockerSandbox

    with provoked() as (docker_guard, _):
        with pytest.raises(pytest.fail.Exception, match=r"mark this test @pytest\.mark\.docker"):
            DockerSandbox.start(run_id="pytest-unmarked")
        with pytest.raises(pytest.fail.Exception, match=r"docker API GET /v1\.41/_ping .*mark this test"):
            docker.APIClient(base_url="unix:///var/run/docker.sock", version="1.41").ping()
        assert len(docker_guard.violations) == 2  # even if the code under test had swallowed them
    assert os.environ["DOCKER_HOST"] == conftest.UNMARKED_DOCKER_HOST  # what its subprocesses see


def test_an_unmarked_test_cannot_load_the_bundled_model():
    from gym.models.store import resolve_model

    with (
        provoked(),
        pytest.raises(pytest.fail.Exception, match=r"bundled model 'smollm2'.*@pytest\.mark\.model"),
    ):
        resolve_model("smollm2")


@pytest.mark.docker
def test_a_marked_test_is_left_alone():
    import docker.api.client

    assert os.environ.get("DOCKER_HOST") != conftest.UNMARKED_DOCKER_HOST
    assert not conftest._docker_guard.violations and conftest._docker_guard.allowed
    assert callable(docker.api.client.APIClient.send)
