"""What coworkers cost a rollout: the oracle of `acme/ask-colleague-l1-s0` with its coworkers and
the same task without them (pairs, alternating, so load hits both alike), and the pester cheat
(40 direct messages, every colleague's reply read). From each trajectory's `meta.coworkers`: how
long one look at the chat and one reply take, replies per second of coworker time, and the share
of replies from rules (all of them: no model-backed responder yet).

.venv/bin/python bench/bench_coworkers.py   -> bench/results/coworkers.json
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from gym.episode import open_episode
from gym.policies.cheats import PesterCheat
from gym.policies.oracle import OraclePolicy
from gym.task_refs import resolve

PAIRS = 4
TASK = "acme/ask-colleague-l1-s0"


async def rollout(task, policy) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    async with open_episode(task, run_id="bench-coworkers") as episode:
        trajectory = await episode.play(policy)
    return time.perf_counter() - started, trajectory.meta.get("coworkers", [])


def main() -> None:
    [task] = resolve([TASK])
    alone = task.model_copy(update={"coworkers": []})
    asyncio.run(rollout(alone, OraclePolicy(alone)))  # warm: the world image, the MCP servers' tool lists
    with_s, without_s, logs = [], [], []
    for _ in range(PAIRS):
        seconds, _ = asyncio.run(rollout(alone, OraclePolicy(alone)))
        without_s.append(seconds)
        seconds, log = asyncio.run(rollout(task, OraclePolicy(task)))
        with_s.append(seconds)
        logs.append(log)
    pester_s, pester_log = asyncio.run(rollout(task, PesterCheat()))
    logs.append(pester_log)
    entries = [e for log in logs for e in log]
    reads = [e["seconds"] for e in entries if "read" in e]
    posts = [e["seconds"] for e in entries if "said" in e]
    errors = [e["error"] for e in entries if "error" in e]
    write(
        "coworkers",
        {
            "what": f"{TASK}: the oracle's rollout (sandbox start to episode end, no grading) with its "
            "coworkers vs the same task without them, in alternating pairs; then cheat-pester (40 DMs). "
            "Per look at the chat (after each call that posts: an exec of mcp_wrappers.chat.coworkers "
            "inbox as the grader) and per reply (its post as the person)",
            "load_average_at_start": os.getloadavg()[0],
            "rollout_without_coworkers_s": summary(without_s),
            "rollout_with_coworkers_s": summary(with_s),
            "coworkers_add_s": round(summary(with_s)["median"] - summary(without_s)["median"], 3),
            "pester_rollout_s": round(pester_s, 3),
            "pester_replies": sum(1 for e in pester_log if "said" in e),
            "read_s": summary(reads),
            "reply_post_s": summary(posts),
            "replies_per_coworker_second": round(len(posts) / (sum(reads) + sum(posts)), 3),
            "replies_from_rules_share": 1.0 if posts else None,
            "errors": errors,
        },
    )


if __name__ == "__main__":
    main()
