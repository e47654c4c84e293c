"""The chat app with each server, in one run: egym's compatible service against real Mattermost.

    .venv/bin/python bench/bench_chat.py   -> bench/results/chat.json   (also: make bench, `chat`)

For each image of `gym.sandbox.docker_client.CHAT_IMAGES` (compat = egym/world:latest,
real = egym/world:mattermost), ROUNDS rounds, the two servers alternating (and the order
swapped every round, so a burst of load from other jobs does not land on one server only):

- chat ready: `DockerSandbox.start` with apps db,chat and no chat file, until egym-init
  says READY (the chat app answered `/system/ping`);
- seeded sandbox: the same with a small chat file (SEED) loaded through the API, then the
  chat MCP server started and `tools/list` answered (start-to-tools/list); memory measured
  after the seed is loaded, before the MCP server starts; CALLS round trips of `read_channel`
  and of `list_channels` over that MCP session (ROUNDS * CALLS per tool in all);
- acme sandbox: `task_sandbox` of onboard-engineer (the acme world's chat
  baked into the world image): start time and memory;
- rollouts of chat-heavy tasks with the `oracle` policy through `gym.rollout.run_rollout`
  (the path `egym rollout --chat ...` takes): time, grade, chat tool calls and their time.

Memory: the container's usage as `docker stats` shows it (cgroup usage minus inactive page
cache), the raw cgroup usage, and the RSS of every process of OS user `chat` (the server).
Medians with min/max per server, and real/compat ratios of the medians.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import write
from core.errors import EgymError
from gym.mcp_client import McpServerConnection
from gym.sandbox import DockerSandbox
from gym.sandbox.docker_client import CHAT_IMAGES, client, require_image
from gym.sandbox.launch import task_sandbox, world_image
from gym.sandbox.overlay import overlay_tar

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 4
CALLS = 10  # round trips per tool and round, 40 in all: spread over the rounds as load comes and goes
APPS = ("db", "chat")
ACME_TASK = "tasks/acme/onboard-engineer"
ROLLOUTS = {"tasks/acme/onboard-engineer": 3, "tasks/acme/q1-close": 2}  # task -> rollouts per server
PROBES = {  # round-trip tools: one read, one listing
    "read_channel": {"channel": "finance", "limit": 5},
    "list_channels": {},
}
SEED = """
agent_user: dana
team: {name: acme, display_name: Acme}
users: [{username: dana}, {username: raj}, {username: sophie}]
channels: [{name: finance, members: [dana, raj]}, {name: general, members: [dana, raj, sophie]}]
posts:
""" + "".join(
    f'  - {{channel: {("finance", "general")[i % 2]}, user: {("raj", "sophie")[i % 2]}, message: "note {i}"}}\n'
    for i in range(40)
)
MIB = 1 << 20


def stats(samples: list[float], digits: int = 4) -> dict[str, float]:
    """Median, min, max and count (bench.common.summary has no max)."""
    return {
        "median": round(statistics.median(samples), digits),
        "min": round(min(samples), digits),
        "max": round(max(samples), digits),
        "n": len(samples),
    }


@contextlib.contextmanager
def chat_image(image: str) -> Iterator[None]:
    """What `--chat` does (select_chat sets EGYM_IMAGE), for one rollout; restored after."""
    before = os.environ.get("EGYM_IMAGE")
    os.environ["EGYM_IMAGE"] = image
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("EGYM_IMAGE", None)
        else:
            os.environ["EGYM_IMAGE"] = before


def memory(sandbox: DockerSandbox) -> dict[str, float]:
    """The container's memory (MiB) as `docker stats` computes it, the raw cgroup usage, and the chat server's RSS."""
    mem = sandbox.container.stats(stream=False, one_shot=True)["memory_stats"]
    # docker CLI: usage minus inactive page cache (cgroup v1: total_inactive_file, v2: inactive_file)
    cache = mem["stats"].get("total_inactive_file", mem["stats"].get("inactive_file", 0))
    ps = sandbox.exec(["/bin/ps", "-u", "chat", "-o", "rss="], user="root", timeout=10)
    if not ps.ok or not ps.output.split():
        raise RuntimeError(f"no process of user chat in the sandbox: {ps.output.strip()[:200]}")
    return {
        "container_mib": (mem["usage"] - cache) / MIB,
        "container_raw_mib": mem["usage"] / MIB,
        "chat_rss_mib": sum(int(kib) for kib in ps.output.split()) / 1024,
    }


async def timed_call(conn: McpServerConnection, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    outcome = await conn.call_tool(tool, args)
    if outcome.is_error:
        raise RuntimeError(f"{tool} failed: {outcome.text[:200]}")
    return time.perf_counter() - started


class ServerBench:
    """Samples of one chat server's figures, collected over the rounds."""

    def __init__(self, chat: str, tag: str):
        # Pinned by id: other jobs on this machine may rebuild the tags during the run, and a new base
        # means a new world image (baking the acme world takes ~40 s), which is not what is measured here.
        self.chat, self.tag, self.image = chat, tag, client().images.get(tag).id
        self.samples: dict[str, list[float]] = {}
        self.rollouts: dict[str, list[dict[str, Any]]] = {}
        self.errors: list[str] = []
        self.tools = 0

    def add(self, figure: str, value: float) -> None:
        self.samples.setdefault(figure, []).append(value)

    async def chat_ready(self) -> None:
        started = time.perf_counter()
        sandbox = await asyncio.to_thread(DockerSandbox.start, self.image, apps=APPS, run_id="bench-chat")
        self.add("chat_ready_s", time.perf_counter() - started)
        await asyncio.to_thread(sandbox.close)

    async def seeded(self) -> None:
        started = time.perf_counter()
        sandbox = await asyncio.to_thread(
            DockerSandbox.start,
            self.image,
            apps=APPS,
            overlay=overlay_tar(extra={"chat/001-bench.yaml": SEED.encode()}),
            run_id="bench-chat",
        )
        try:
            ready = time.perf_counter()
            self.add("seeded_ready_s", ready - started)
            for key, value in (await asyncio.to_thread(memory, sandbox)).items():
                self.add(f"seeded_{key}", value)
            listing = time.perf_counter()
            async with McpServerConnection(sandbox, "chat") as conn:
                self.tools = len(await conn.list_tools())
                listed = time.perf_counter()
                # start-to-tools/list leaves out the memory probe between the two
                self.add("start_to_tools_list_s", listed - started - (listing - ready))
                self.add("mcp_server_ready_s", listed - listing)
                for tool, args in PROBES.items():
                    await timed_call(conn, tool, args)  # not counted: the first call opens the HTTP client
                    for _ in range(CALLS):
                        self.add(f"round_trip_{tool}_ms", 1000 * await timed_call(conn, tool, args))
        finally:
            await asyncio.to_thread(sandbox.close)

    async def acme(self) -> None:
        from gym.tasks import load_task

        task = load_task(ROOT / ACME_TASK)

        def run() -> None:
            world_image(_acme_world(), self.image)  # built before the run; looked up here, outside the timing
            started = time.perf_counter()
            with task_sandbox(task, run_id="bench-chat", base=self.image) as sandbox:
                self.add("acme_ready_s", time.perf_counter() - started)
                for key, value in memory(sandbox).items():
                    self.add(f"acme_{key}", value)

        await asyncio.to_thread(run)

    async def rollout(self, task_path: str) -> None:
        from gym.rollout import RolloutSpec, run_rollout
        from gym.tasks import load_task

        task = load_task(ROOT / task_path)
        spec = RolloutSpec(
            run_id="bench-chat",
            rollout_id=uuid.uuid4().hex[:12],
            task=task.key,
            task_path=str(task.path),
            policy="oracle",
        )
        with chat_image(self.image):
            outcome = await run_rollout(spec)
        if outcome.grade is None:
            raise RuntimeError(f"rollout of {task.key} failed: {outcome.error}")
        results = [r for step in outcome.trajectory.steps for r in step.results] if outcome.trajectory else []
        chat_results = [r for r in results if r.name.startswith("chat.")]
        self.rollouts.setdefault(task.key, []).append(
            {
                "seconds": outcome.seconds,
                "grade": f"{outcome.grade.earned:g}/{outcome.grade.possible:g}",
                "passed": outcome.passed,
                "tool_calls": len(results),
                "chat_calls": len(chat_results),
                "chat_tool_s": sum(r.seconds for r in chat_results),
                "chat_errors": sum(r.is_error for r in chat_results),
            }
        )

    async def attempt(self, what: str, step: Callable[[], Awaitable[None]]) -> None:
        """Run one measurement; a failure is recorded (with its first line) and the run goes on."""
        try:
            await step()
        except Exception as exc:  # noqa: BLE001 - a failed measurement is a result, the others still run
            self.errors.append(f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")

    def report(self) -> dict[str, Any]:
        rollouts = {}
        for key, runs in self.rollouts.items():
            rollouts[key] = {
                "seconds": stats([r["seconds"] for r in runs], 2),
                "chat_tool_s": stats([r["chat_tool_s"] for r in runs], 3),
                "grades": sorted({r["grade"] for r in runs}),
                "passed": [r["passed"] for r in runs],
                "tool_calls": runs[0]["tool_calls"],
                "chat_calls": runs[0]["chat_calls"],
                "chat_errors": sum(r["chat_errors"] for r in runs),
            }
        return {
            "image": self.tag,
            "image_id": self.image,
            "tools": self.tools,
            "figures": {name: stats(values) for name, values in self.samples.items()},
            "rollouts": rollouts,
            "errors": self.errors,
        }


def medians(report: dict[str, Any]) -> dict[str, float]:
    """Every figure's median, rollouts included (`rollout_<task>_s`, `rollout_<task>_chat_tool_s`)."""
    found = {name: s["median"] for name, s in report["figures"].items()}
    for key, r in report["rollouts"].items():
        name = key.split("/")[-1]
        found[f"rollout_{name}_s"] = r["seconds"]["median"]
        found[f"rollout_{name}_chat_tool_s"] = r["chat_tool_s"]["median"]
    return found


async def run_all(benches: list[ServerBench]) -> list[list[float]]:
    loads = []
    for bench in benches:  # untimed: the world image of acme on each server (built once, then cached)
        await bench.attempt(
            "world image", lambda b=bench: asyncio.to_thread(world_image, _acme_world(), b.image)
        )
        await bench.attempt("warm-up", bench.chat_ready)
        bench.samples.clear()
    for round_no in range(ROUNDS):
        order = benches if round_no % 2 == 0 else benches[::-1]
        for bench in order:
            await bench.attempt("chat ready", bench.chat_ready)
            await bench.attempt("seeded sandbox", bench.seeded)
            await bench.attempt("acme sandbox", bench.acme)
            for task_path, count in ROLLOUTS.items():
                if round_no < count:
                    await bench.attempt(f"rollout {task_path}", lambda b=bench, t=task_path: b.rollout(t))
        loads.append([round(x, 2) for x in os.getloadavg()])
        print(f"round {round_no + 1}/{ROUNDS} done, load average {loads[-1]}", flush=True)
    return loads


def _acme_world():
    from gym.episode import world_of
    from gym.tasks import load_task

    return world_of(load_task(ROOT / ACME_TASK))


def table(reports: dict[str, dict[str, Any]]) -> tuple[list[tuple[str, float, float, float | None]], dict]:
    """(figure, compat median, real median, real/compat) for every figure both servers have."""
    compat, real = medians(reports["compat"]), medians(reports["real"])
    rows = [
        (f, compat[f], real[f], round(real[f] / compat[f], 2) if compat[f] else None)
        for f in compat
        if f in real
    ]
    return rows, {f: ratio for f, _, _, ratio in rows}


def main() -> int:
    began, load_start = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    benches, missing = [], {}
    for chat, image in CHAT_IMAGES.items():
        try:
            require_image(image)
            benches.append(ServerBench(chat, image))
        except EgymError as exc:
            missing[chat] = {"image": image, "missing": True, "reason": str(exc)}
    loads = asyncio.run(run_all(benches))
    reports = {b.chat: b.report() for b in benches} | missing
    ratios: dict[str, float | None] = {}
    if all(chat in reports and not reports[chat].get("missing") for chat in ("compat", "real")):
        rows, ratios = table(reports)
        print(f"{'figure':34} {'compat':>9} {'real':>9} {'real/compat':>11}")
        for figure, c, r, ratio in rows:
            print(f"{figure:34} {c:9.3f} {r:9.3f} {ratio if ratio is not None else '-':>11}")
    for chat, r in reports.items():
        for line in r.get("errors", []) + ([r["reason"]] if r.get("missing") else []):
            print(f"{chat}: {line}")
    write(
        "chat",
        {
            "nproc": os.cpu_count(),
            "loadavg_start": load_start,
            "loadavg_after_round": loads,
            "duration_s": round(time.perf_counter() - began, 1),
            "rounds": ROUNDS,
            "calls_per_round": CALLS,
            "seed": {"users": 3, "channels": 2, "posts": 40},
            "acme_task": ACME_TASK,
            "servers": reports,
            "ratio_real_over_compat": ratios,
        },
    )
    return 1 if any(r.get("errors") for r in reports.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
