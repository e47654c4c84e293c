"""Evaluating a model behind an OpenAI-compatible endpoint, as docs/evaluate.md tells a user to.

`egym models serve` stands for the user's server (vLLM, llama.cpp, a hosted API: all
speak the same chat-completions protocol). `egym batch` on a family with the `openai`
policy pointed at it runs real sandboxes, grades every episode and prints the score
table; the store holds each rollout with the endpoint's model and its tool calls. The
same with the tools written into the prompt (`-o tools=prompt`), for servers started
without tool calling.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gym.store import Store
from tests.interop.serving import ROOT, egym_server

pytestmark = [pytest.mark.docker, pytest.mark.model, pytest.mark.slow]
FAMILY = "acme/product-price"


@pytest.fixture(scope="module")
def endpoint():
    with egym_server("models", "serve", "smollm2", health="/v1/models", ready_within=180) as served:
        yield served.url + "/v1"


def evaluate(endpoint: str, store: str, run: str, *options: str) -> subprocess.CompletedProcess:
    command = [
        *(sys.executable, "-m", "gym.cli", "batch", FAMILY, "--levels", "0", "--seeds", "0"),
        *("--policy", "openai", "--model", "smollm2", "--option", f"base_url={endpoint}"),
        *("--option", "temperature=0", "--option", "max_tokens=160", "--harness", "max_turns=3"),
        *("--store", store, "--run", run, *options),
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize(
    ("run", "options"),
    [("api", ("--option", "tool_choice=first")), ("prompt", ("--option", "tools=prompt"))],
)
def test_a_family_is_evaluated_against_an_openai_compatible_endpoint(endpoint, tmp_path, run, options):
    store_path = str(tmp_path / "runs.db")
    done = evaluate(endpoint, store_path, run, *options)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout + done.stderr
    assert f"{FAMILY}-l0-s0" in printed and "family levels consistent" in printed  # the score tables

    store = Store(store_path)
    try:
        rollouts = store.list_rollouts(run, with_items=True)
        assert store.get_run(run).model == "smollm2"
    finally:
        store.close()
    assert [r.task for r in rollouts] == [f"{FAMILY}-l0-s0"]
    for rollout in rollouts:
        trajectory, grade = rollout.trajectory_model(), rollout.grade_model()
        assert rollout.status == "done" and grade is not None and grade.possible > 0
        assert trajectory.error is None and trajectory.model == "smollm2"
        turns = [step.turn for step in trajectory.steps]
        assert turns and all(t.completion_tokens for t in turns)  # the endpoint answered every turn
    if run == "api":  # tool_choice=first: the server made the first turn a call to an offered tool
        assert all(r.trajectory_model().steps[0].turn.tool_calls for r in rollouts)
