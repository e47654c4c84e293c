"""egym as a verifiers environment (gym/interop/verifiers_env), run by verifiers' own `vf-eval`.

verifiers 0.4.0 pins mcp and openai versions egym cannot share, so it runs in a venv
of its own (tests/interop/side_venv.py) with the `egym-verifiers` package installed,
and reaches egym over the wire: `egym serve-env --protocol ors` for the episodes and
`egym models serve` for the bundled SmolLM2. SmolLM2 mostly earns 0: the test checks
the plumbing (rewards are egym's grades, every episode's container is gone), not the score.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.gym.test_openai_server import model_server
from tests.gym.test_ors import ors_server
from tests.interop.serving import containers, oracle
from tests.interop.side_venv import side_venv

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gym" / "interop" / "verifiers_env"
TASKS = ["acme/product-price-l0-s0", "acme/product-price-l0-s1", "acme/product-price-l0-s2"]
# uv: verifiers' chat harness runs as a uv script; setuptools: the package installs without isolation.
REQUIREMENTS = ["verifiers==0.4.0", "ors-sdk==0.1.0", "uv==0.13.9", "setuptools>=68"]


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> str:
    """The verifiers venv's python, with this checkout's egym-verifiers installed (a copy: no build files here)."""
    python = side_venv("verifiers", REQUIREMENTS, python="3.12")
    source = tmp_path_factory.mktemp("pkg") / "verifiers_env"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(source)]
    done = subprocess.run(pip, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return python


def venv_env(python: str) -> dict[str, str]:
    """The environment vf-eval runs in: its venv's scripts (uv among them) first on PATH."""
    return {**os.environ, "PATH": f"{Path(python).parent}:{os.environ['PATH']}"}


SCRIPTED = """
import asyncio, json, sys
import verifiers.v1 as vf
from egym_verifiers import EgymData, EgymState, EgymTask
from egym_verifiers.episodes import attached, environment, opened

base_url, key, calls, answer = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]

async def main():
    async with opened(base_url, {"id": key}) as session:
        await session.list_tools()  # the episode is up
        async with environment(base_url) as env:  # the tool server's way in: the episode by its id
            for tool, args in calls:
                await attached(env, session.sid).call_tool(tool, args)
        data = EgymData(id=key, prompt="-", base_url=base_url, spec={"id": key}, episode=session.sid)
        task = EgymTask(data)
        state = EgymState(base_url=base_url, episode=session.sid)
        agent = vf.AgentInfo(config=vf.AgentConfig())
        trace = vf.Trace(task=vf.TraceTask(type="EgymTask", data=data), state=state, agent=agent)
        trace.root_reply = answer  # the model's final reply
        await task.score(trace)
        print(json.dumps({"reward": trace.reward, "rewards": {k: v.score for k, v in trace.rewards.items()},
                          "egym": trace.info["egym"], "metrics": trace.metrics}))

asyncio.run(main())
"""


@pytest.mark.docker
@pytest.mark.slow
def test_the_rubric_scores_the_oracles_answer_with_egyms_grade(python, docker_image):
    """No model: the oracle's calls through the episode, its answer as the final reply, the task's reward."""
    calls, answer = oracle(TASKS[0])
    steps = json.dumps([[step.tool, step.args] for step in calls])
    with ors_server(TASKS[0]) as (url, run):
        done = subprocess.run(
            [python, "-c", SCRIPTED, url, TASKS[0], steps, answer],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        scored = json.loads(done.stdout.strip().splitlines()[-1])
        assert containers(run) == []  # the episode was deleted when its context closed
    assert scored["reward"] == 1.0 and scored["rewards"] == {"egym": 1.0}
    egym = scored["egym"]
    assert egym["score"] == 1.0 and egym["earned"] == egym["possible"] and egym["passed"] is True
    assert {item["status"] for item in egym["items"]} == {"pass"}
    assert scored["metrics"] == {"earned": egym["earned"], "possible": egym["possible"], "passed": 1.0}


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_vf_eval_runs_egym_episodes_on_the_bundled_model(python, docker_image, tmp_path):
    with ors_server(*TASKS) as (ors_url, run), model_server() as model_url:
        command = [
            str(Path(python).with_name("vf-eval")),
            "egym-verifiers",
            "--env.taskset.base-url",
            ors_url,
            "--env.taskset.split",
            "train",
            "-m",
            "smollm2",
            "--client.base-url",
            model_url,
            "-n",
            "2",
            "-r",
            "1",
            "--sampling.max-tokens",
            "64",
            "--env.agent.max-turns",
            "4",
            "--no-push",
            "--no-rich",
            "-o",
            str(tmp_path / "out"),
            "--run.name",
            "egym-smollm2",
        ]
        done = subprocess.run(
            command, cwd=tmp_path, env=venv_env(python), capture_output=True, text=True, timeout=1500
        )
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
        assert containers(run) == []  # every episode deleted once its rollout ended
    episodes = [json.loads(line) for line in (tmp_path / "out" / "egym-smollm2" / "traces.jsonl").open()]
    traces = [trace for episode in episodes for trace in episode["traces"]]
    assert sorted(t["task"]["key"] for t in traces) == TASKS[:2]  # -n 2 of the server's train split
    assert len({t["task"]["data"]["episode"] for t in traces}) == 2  # an egym episode per rollout
    for trace in traces:
        assert trace["ok"] and not trace["errors"], trace["errors"]
        grade = trace["info"]["egym"]  # what egym's submit returned for this episode
        assert grade["task"] == trace["task"]["key"] and grade["incomplete"] is False
        assert trace["rewards"] == {"egym": {"score": grade["score"], "weight": 1.0}}
        assert trace["metrics"]["earned"] == grade["earned"] and grade["items"]
        assert "Jordan Lee" in trace["task"]["data"]["system_prompt"]  # egym's prompt, not the title
        assert "db.query" in [tool["name"] for tool in trace["tools"]] and "submit" not in str(trace["tools"])
