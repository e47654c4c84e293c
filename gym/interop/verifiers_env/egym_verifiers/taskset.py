"""egym's tasks as a verifiers taskset: `vf-eval egym-verifiers --env.taskset.base-url ...`.

The tasks are those a running `egym serve-env --protocol ors` lists for a split. Each
rollout is one egym episode, opened by `EgymEnv.run` and deleted when the rollout ends,
whatever happened: its container, its prompt (egym's system prompt and the task), its
tools (served by `EgymToolset`), its limits. The model's final reply is submitted as
the answer when the rollout is scored; the reward is egym's normalised score, and the
grade's points and items go into `trace.info["egym"]`. An incomplete grade (an item
that could not be graded, e.g. a judge item without a judge model) has no reward:
the rollout fails with a TaskError rather than scoring 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness

from egym_verifiers.episodes import SUBMIT, attached, environment, opened, task_specs
from egym_verifiers.toolset import EgymState, EgymToolset


class EgymConfig(vf.TasksetConfig):
    base_url: str = "http://127.0.0.1:8080"
    """The `egym serve-env --protocol ors` server."""
    split: str = "train"
    """Which of the server's splits: train, val or test."""
    num_tasks: int | None = None
    """The first this many tasks of the split (all when unset)."""
    tools: vf.SharedToolsetConfig = vf.SharedToolsetConfig()


class EgymData(vf.TaskData):
    base_url: str
    spec: dict[str, Any]
    """The task as the server lists it (`id` is egym's task key)."""
    episode: str | None = None
    """The egym episode playing it; set per rollout by EgymEnv."""


class EgymTask(vf.Task[EgymData, EgymState]):
    @property
    def key(self) -> str:
        return self.data.spec["id"]

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        if self.data.episode is None:
            raise vf.TaskError("an egym task runs in an episode that EgymEnv opens; pair it with EgymEnv")
        trace.state.base_url, trace.state.episode = self.data.base_url, self.data.episode

    @vf.stop
    async def episode_over(self, trace: vf.Trace) -> bool:
        """egym refused a call (turn or time limit): stop, and grade what was done."""
        return trace.state.over is not None

    @vf.reward(weight=1.0)
    async def egym(self, trace: vf.Trace) -> float:
        """Submit the final reply; egym's grade is the reward."""
        async with environment(self.data.base_url) as env:
            graded = await attached(env, trace.state.episode).call_tool(SUBMIT, {"answer": trace.last_reply})
        metadata = dict(graded.metadata or {})
        trace.info["egym"] = metadata
        for name in ("earned", "possible"):
            trace.record_metric(name, float(metadata[name]))
        if graded.reward is None:  # incomplete: a 0 would be a wrong training signal
            note = graded.blocks[0].text if graded.blocks else "the grade is incomplete"
            raise vf.TaskError(f"egym grade of {self.key} has no reward: {note}")
        trace.record_metric("passed", float(bool(metadata.get("passed"))))
        return float(graded.reward)


class EgymTaskset(vf.Taskset[EgymTask, EgymConfig]):
    @classmethod
    def toolsets(cls, config: EgymConfig) -> list[vf.Toolset]:
        return [EgymToolset(config.tools)]

    def load(self) -> Iterator[EgymTask]:
        # load() may run inside verifiers' event loop: the client gets a loop of its own in a thread.
        with ThreadPoolExecutor(1) as thread:
            specs = thread.submit(asyncio.run, task_specs(self.config.base_url, self.config.split)).result()
        for spec in specs[: self.config.num_tasks]:
            yield EgymTask(
                # The prompt here is the title; the episode's own prompt replaces it (EgymEnv).
                EgymData(
                    id=spec["id"],
                    name=spec["title"],
                    prompt=spec["title"],
                    base_url=self.config.base_url,
                    spec=spec,
                ),
                self.config.task,
            )


class EgymEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The agent runs here (its tools run in the episode's sandbox), not in a Prime sandbox."""


class EgymEnv(vf.SingleAgentEnv, vf.Env[EgymEnvConfig]):
    """Each rollout in an egym episode of its own: opened here, deleted when the rollout ends."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        async with opened(task.data.base_url, task.data.spec) as session:
            (prompt,) = await session.get_prompt()  # answered once the episode's container is up
            parts = dict(prompt.detail or {})
            episode = task.with_data(
                prompt=parts.get("user", prompt.text), system_prompt=parts.get("system"), episode=session.sid
            )
            await agents.agent.run(episode)


class EgymHarness(NullHarness):
    """verifiers' plain chat loop over the episode's tools only: no bash or edit tool of its own
    (the default bash harness's would run on this machine, not in the episode's sandbox)."""


def load_environment(
    base_url: str = "http://127.0.0.1:8080", split: str = "train", num_tasks: int | None = None
) -> vf.Env:
    """The environment in Python (vf-eval and prime-rl find it by the id `egym-verifiers`)."""
    taskset = {"id": "egym-verifiers", "base_url": base_url, "split": split, "num_tasks": num_tasks}
    return vf.load_environment(vf.resolve_env_config({"taskset": taskset}))
