"""What each interop adapter adds over a direct egym episode, and how many episodes one ORS server holds.

    .venv/bin/python bench/bench_interop.py [--quick]   -> bench/results/interop.json

1. Overhead. One level-0 instance (acme/product-price-l0-s0), four ways (bench/interop_clients.py):
   `gym.episode.ToolSession` in process ("direct"), and `egym serve-env --protocol ors|openenv|nemo-gym`
   as real subprocesses with the same settings, spoken to by ors-sdk's client, a WebSocket client and
   an HTTP client. Each adapter plays one untimed warm-up episode, then ROUNDS timed ones, the
   adapters taking turns (in a rotating order) so that load from other jobs falls on all of them:
   start (open -> tools listed), CALLS `db.query "SELECT 1"` calls, submit (-> reward; the grade and
   the container's removal). Medians, p90s and adapter/direct ratios, all from this run.
2. ORS capacity. K concurrent episodes (K = 1, 2, 4, 8, 16) on one ORS server: their start under K,
   then each calls `db.query` for PHASE seconds, back to back (a closed loop: the server is never
   idle), then again with THINK_S between calls (an agent that thinks); per loop, the median call
   latency per K and the first K whose median exceeds twice K=1's. Each loop takes at most CALL_CAP
   calls per episode: the harness counts the whole transcript's tokens every turn, so a call costs
   more the longer an episode runs, which would be mistaken for load. The ladder is climbed twice
   (PASSES): the second shows how far the machine's other jobs move the first. It stops early when
   memory, a failed start or the time budget says so.
os.getloadavg() is sampled through every phase: other jobs may share this machine. Every container
carries the run label; any left at the end (or after Ctrl-C) is counted, reported and removed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ors.client import AsyncORS

from bench.common import summary, write
from bench.interop_clients import (
    DirectEpisode,
    EpisodeClient,
    NemoGymEpisode,
    OpenEnvEpisode,
    OrsEpisode,
    egym_servers,
)
from gym.harness.config import HarnessConfig
from gym.policies.oracle import AnswerStep, ToolStep, load_solution
from gym.sandbox.docker_client import client as docker_client
from gym.sandbox.reaper import reap
from gym.task_refs import resolve

TASK = "acme/product-price-l0-s0"
EXPECTED = "3200"  # in the oracle query's output: the tools really answered
TRIVIAL = ("db.query", {"sql": "SELECT 1 AS one"})
HARNESS = {"max_turns": 1000, "time_limit_s": 1800}  # room for the capacity loops; the same everywhere
SERVERS = ("ors", "openenv", "nemo-gym")
ADAPTERS = ("direct", *SERVERS)
THINK_S = 0.1  # the paced loop's pause between calls: an agent faster than any LLM turn
CALL_CAP = 150  # calls per episode and loop: the harness's per-turn cost grows with the transcript
CONTAINER_MB = 250  # a level-0 container is ~100-150 MB; kept free per episode before a level starts


@dataclass(frozen=True)
class Plan:
    rounds: int  # timed episodes per adapter
    calls: int  # timed tool calls per episode
    levels: tuple[int, ...]  # concurrent ORS episodes
    phase_s: float  # seconds each level's episodes loop their calls
    passes: int  # times the ladder of levels is climbed
    budget_s: float  # the capacity levels stop when the next would not fit


FULL = Plan(rounds=10, calls=30, levels=(1, 2, 4, 8, 16), phase_s=10, passes=2, budget_s=570)
QUICK = Plan(rounds=1, calls=30, levels=(1, 2, 4), phase_s=3, passes=1, budget_s=150)


class LoadSampler:
    """os.getloadavg()'s 1-minute figure every half second while a phase runs."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoadSampler:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()
        self.samples.append(os.getloadavg()[0])

    async def _sample(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            await asyncio.sleep(0.5)

    def report(self) -> dict[str, float]:
        s = self.samples
        return {"start": s[0], "end": s[-1], "max": max(s), "mean": round(sum(s) / len(s), 2)}


def mem_available_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


async def timed(step: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = await step()
    return time.perf_counter() - started, value


class Bench:
    def __init__(self, plan: Plan, run_id: str, urls: dict[str, str], ors: AsyncORS) -> None:
        (self.task,) = resolve([TASK])
        steps = load_solution(self.task.path / self.task.solution)
        self.oracle_call = next(s for s in steps if isinstance(s, ToolStep))
        self.answer = next(s.answer for s in steps if isinstance(s, AnswerStep))
        self.plan, self.run_id, self.urls, self.ors = plan, run_id, urls, ors
        self.opened = 0

    def episode(self, adapter: str) -> EpisodeClient:
        self.opened += 1
        if adapter == "direct":
            harness = HarnessConfig(**HARNESS)
            return DirectEpisode(
                self.task, run_id=self.run_id, episode_id=f"direct-{self.opened}", harness=harness
            )
        if adapter == "ors":
            return OrsEpisode(self.ors, TASK)
        return {"openenv": OpenEnvEpisode, "nemo-gym": NemoGymEpisode}[adapter](self.urls[adapter], TASK)

    async def play(self, adapter: str) -> dict[str, Any]:
        """One episode: start, the oracle's query (checked), CALLS trivial calls, the oracle's answer."""
        episode = self.episode(adapter)
        try:
            start_s, _ = await timed(episode.start)
            output = await episode.call(self.oracle_call.tool, self.oracle_call.args)
            assert EXPECTED in output, (
                f"{adapter}: the oracle's query did not answer {EXPECTED}: {output[:200]}"
            )
            calls = [(await timed(lambda: episode.call(*TRIVIAL)))[0] for _ in range(self.plan.calls)]
            submit_s, reward = await timed(lambda: episode.submit(self.answer))
        finally:
            await episode.close()
        return {"start_s": start_s, "call_s": calls, "submit_s": submit_s, "reward": reward}

    async def overhead(self) -> dict[str, Any]:
        async with LoadSampler() as load:
            for adapter in ADAPTERS:  # the first episode of a process imports and builds what it needs
                await self.play(adapter)
            warm_load = os.getloadavg()[0]
            seen: dict[str, list[dict[str, Any]]] = {adapter: [] for adapter in ADAPTERS}
            for index in range(self.plan.rounds):
                order = ADAPTERS[index % len(ADAPTERS) :] + ADAPTERS[: index % len(ADAPTERS)]
                for adapter in order:
                    seen[adapter].append(await self.play(adapter))
        per = {adapter: _pooled(runs) for adapter, runs in seen.items()}
        for adapter in SERVERS:
            per[adapter]["ratio_to_direct"] = {
                metric: {
                    stat: round(per[adapter][metric][stat] / per["direct"][metric][stat], 2)
                    for stat in ("median", "p90")
                }
                for metric in ("start_s", "call_s", "submit_s")
            }
        return {"adapters": per, "loadavg_1m": load.report() | {"after_warmup": warm_load}}

    async def capacity(self, deadline: float) -> dict[str, Any]:
        """The ladder of K, PASSES times over: a second pass shows how much the machine's other jobs moved it."""
        passes = []
        for number in range(1, self.plan.passes + 1):
            levels, stopped = await self._ladder(number, deadline)
            measured = [lv for lv in levels if "closed_loop" in lv]
            passes.append(
                {
                    "levels": levels,
                    "closed_loop": _doubling(measured, "closed_loop"),
                    "paced": _doubling(measured, "paced"),
                    "max_k_measured": max((lv["k"] for lv in measured), default=None),
                    "stopped_early": stopped,
                }
            )
            if stopped:
                break
        return {"passes": passes}

    async def _ladder(self, number: int, deadline: float) -> tuple[list[dict[str, Any]], str | None]:
        levels: list[dict[str, Any]] = []
        for k in self.plan.levels:
            free = mem_available_mb()
            if free < k * CONTAINER_MB + 1024:
                return levels, f"K={k}: {free} MB available, under {k * CONTAINER_MB + 1024} MB"
            per_start = max((lv["start_s"]["p90"] / lv["k"] for lv in levels), default=10.0)
            needed = 2 * self.plan.phase_s + k * max(per_start, 3.0) + 15  # starts, loops, removals
            if time.monotonic() + needed > deadline:
                return levels, f"K={k}: the time budget ({self.plan.budget_s:g} s) would be exceeded"
            print(f"  pass {number}, K={k}...", flush=True)
            level, failure = await self._level(k)
            levels.append(level)
            if failure:
                return levels, f"K={k}: {failure}"
        return levels, None

    async def _level(self, k: int) -> tuple[dict[str, Any], str | None]:
        """K episodes started at once, then calling side by side (back to back, then paced); all closed after."""
        episodes = [OrsEpisode(self.ors, TASK) for _ in range(k)]
        level: dict[str, Any] = {"k": k, "mem_available_mb_before": mem_available_mb()}
        try:
            async with LoadSampler() as start_load:
                started = await asyncio.gather(*(timed(e.start) for e in episodes), return_exceptions=True)
            failed = [r for r in started if isinstance(r, BaseException)]
            if failed:
                level["start_failures"] = len(failed)
                return level, f"{len(failed)} of {k} episodes failed to start: {str(failed[0])[:200]}"
            level["start_s"] = summary([seconds for seconds, _ in started])
            level["loadavg_1m_start"] = start_load.report()
            for name, think_s in (("closed_loop", 0.0), ("paced", THINK_S)):
                async with LoadSampler() as load:
                    loops = await asyncio.gather(*(self._loop(e, think_s) for e in episodes))
                samples = [s for calls, _ in loops for s in calls]
                level[name] = {
                    "call_s": summary(samples),
                    "calls_per_s": round(len(samples) / max(elapsed for _, elapsed in loops), 1),
                    "loadavg_1m": load.report(),
                }
            level["mem_available_mb_during"] = mem_available_mb()
            return level, None
        finally:
            await asyncio.gather(*(e.close() for e in episodes), return_exceptions=True)

    async def _loop(self, episode: OrsEpisode, think_s: float) -> tuple[list[float], float]:
        """`db.query` for PHASE seconds (at most CALL_CAP calls): back to back, or THINK_S apart."""
        calls: list[float] = []
        began = time.monotonic()
        if think_s:
            await asyncio.sleep(random.uniform(0, think_s))  # the episodes do not call in step
        while time.monotonic() - began < self.plan.phase_s and len(calls) < CALL_CAP:
            calls.append((await timed(lambda: episode.call(*TRIVIAL)))[0])
            if think_s:
                await asyncio.sleep(think_s)
        return calls, time.monotonic() - began


def _doubling(levels: list[dict[str, Any]], loop: str) -> dict[str, Any]:
    """The K=1 median call latency and the first K whose median is over twice it."""
    if not levels:
        return {"k1_median_call_s": None, "first_k_over_2x_k1": None, "holds_before_doubling": None}
    base = levels[0][loop]["call_s"]["median"]
    doubled = next((lv["k"] for lv in levels if lv[loop]["call_s"]["median"] > 2 * base), None)
    held = [lv["k"] for lv in levels if doubled is None or lv["k"] < doubled]
    return {"k1_median_call_s": base, "first_k_over_2x_k1": doubled, "holds_before_doubling": max(held)}


def _pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "start_s": summary([r["start_s"] for r in runs]),
        "call_s": summary([s for r in runs for s in r["call_s"]]),
        "submit_s": summary([r["submit_s"] for r in runs]),
        "rewards": sorted({r["reward"] for r in runs}, key=str),
    }


async def measure(plan: Plan, run_id: str) -> dict[str, Any]:
    settings = [arg for key, value in HARNESS.items() for arg in ("--harness", f"{key}={value}")]
    settings += ["--idle-timeout", "300", "--max-episodes", str(max(plan.levels) + 4)]
    began = time.monotonic()
    with egym_servers(list(SERVERS), TASK, run_id=run_id, settings=settings) as urls:
        ors = AsyncORS(base_url=urls["ors"])
        env = ors.environment("egym")
        try:
            bench = Bench(plan, run_id, urls, ors)
            print(f"servers up in {time.monotonic() - began:.0f} s; overhead rounds...", flush=True)
            overhead = await bench.overhead()
            print(f"overhead done at {time.monotonic() - began:.0f} s; ORS capacity...", flush=True)
            capacity = await bench.capacity(began + plan.budget_s)
        finally:
            await env.client.close()
    return {"overhead": overhead, "ors_capacity": capacity, "settings": settings}


def leftovers(run_id: str) -> list[str]:
    found = docker_client().containers.list(all=True, filters={"label": f"egym.run={run_id}"})
    return [c.name for c in found]


def print_summary(result: dict[str, Any]) -> None:
    per = result["overhead"]["adapters"]
    print(f"{'':9} {'start s':>8} {'call ms':>8} {'submit s':>9}  ratios start/call/submit  rewards")
    for adapter, r in per.items():
        ratios = r.get("ratio_to_direct")
        text = (
            "/".join(f"{ratios[m]['median']:.2f}" for m in ("start_s", "call_s", "submit_s"))
            if ratios
            else "-"
        )
        print(
            f"{adapter:9} {r['start_s']['median']:8.2f} {r['call_s']['median'] * 1000:8.1f} "
            f"{r['submit_s']['median']:9.2f}  {text:24} {r['rewards']}"
        )
    for number, ladder in enumerate(result["ors_capacity"]["passes"], 1):
        for level in ladder["levels"]:
            if "closed_loop" in level:
                closed, paced = level["closed_loop"], level["paced"]
                print(
                    f"ORS pass {number} K={level['k']:2}: start median {level['start_s']['median']:5.1f} s; "
                    f"call median {closed['call_s']['median'] * 1000:5.1f} ms back to back "
                    f"({closed['calls_per_s']:5.0f} calls/s), {paced['call_s']['median'] * 1000:5.1f} ms paced; "
                    f"load {closed['loadavg_1m']['mean']}"
                )
        closed, paced = ladder["closed_loop"]["first_k_over_2x_k1"], ladder["paced"]["first_k_over_2x_k1"]
        print(f"pass {number}: first K over 2x K=1: back to back {closed}, paced {paced}")
        if ladder["stopped_early"]:
            print(f"pass {number} stopped early: {ladder['stopped_early']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a 1-2 minute smoke run (not written over the full results)"
    )
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    run_id = f"bench-interop-{uuid.uuid4().hex[:8]}"
    began = time.monotonic()
    try:
        result = asyncio.run(measure(plan, run_id))
    except KeyboardInterrupt:
        print("interrupted: nothing written")
        return 130
    finally:  # also on Ctrl-C or a failure: no container of this run outlives the bench
        left = leftovers(run_id)
        with contextlib.suppress(Exception):
            reap(run_id=run_id)
        remaining = leftovers(run_id)
        print(f"containers of run {run_id}: {len(left)} left at the end, {len(remaining)} after cleanup")
    result |= {
        "run_id": run_id,
        "task": TASK,
        "quick": args.quick,
        "plan": plan.__dict__,
        "containers_left_at_end": len(left),
        "containers_left_after_cleanup": len(remaining),
        "seconds": round(time.monotonic() - began, 1),
        "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
    }
    print_summary(result)
    write("interop-quick" if args.quick else "interop", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
