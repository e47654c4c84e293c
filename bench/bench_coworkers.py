"""What coworkers cost a rollout: the oracle of `acme/ask-colleague-l1-s0` with its coworkers and
the same task without them (pairs, alternating, so load hits both alike), and the pester cheat
(40 direct messages, every colleague's reply read). From each trajectory's `meta.coworkers`: how
long one look at the chat and one reply take, and replies per second of coworker time.
Then the same rollouts of every coworker family's instances with the bundled model rewording every
reply (`-H coworkers.mode=paraphrase`, `egym models serve smollm2` on this machine): the share of
replies in the model's words and in the rules' (a rewording that changed a fact is rejected), how
long a rewording takes, and how many a second round of the same rollouts takes from the cache.

.venv/bin/python bench/bench_coworkers.py   -> bench/results/coworkers.json
"""

from __future__ import annotations

import asyncio
import collections
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from gym.episode import open_episode
from gym.harness.config import HarnessConfig
from gym.harness.coworker_model import CoworkerModelConfig
from gym.policies.cheats import PesterCheat
from gym.policies.oracle import OraclePolicy
from gym.task_refs import resolve

PAIRS = 4
TASK = "acme/ask-colleague-l1-s0"
ROOT = Path(__file__).resolve().parents[1]
# Every coworker family, both levels, one seed: what the model is asked to reword.
REWORDED = [
    f"acme/{family}-l{level}-s0"
    for family in (
        "approval-first",
        "ask-colleague",
        "colleagues-disagree",
        "impostor",
        "missing-detail",
        "refuse-and-escalate",
    )
    for level in (0, 1)
]


async def rollout(task, policy, harness=None) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    async with open_episode(task, run_id="bench-coworkers") as episode:
        trajectory = await episode.play(policy, harness)
    return time.perf_counter() - started, trajectory.meta.get("coworkers", [])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reworded() -> dict:
    """The oracle and cheat-pester on every coworker family, every reply reworded by SmolLM2, twice (the
    second round from the cache)."""
    port = _free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/egym"), "models", "serve", "smollm2", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        for _ in range(600):  # the model loads in a few seconds; a loaded machine takes longer
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        with tempfile.TemporaryDirectory() as cache:
            harness = HarnessConfig(
                coworkers=CoworkerModelConfig(
                    mode="paraphrase", model="smollm2", base_url=base_url, cache_dir=Path(cache)
                )
            )
            rounds = []
            for _ in range(2):
                entries = []
                for task in resolve(REWORDED):
                    for policy in (OraclePolicy(task), PesterCheat()):
                        entries += asyncio.run(rollout(task, policy, harness))[1]
                rounds.append(entries)
    finally:
        server.terminate()
        server.wait(timeout=30)
    said = [e["said"] for e in rounds[0] if "said" in e]
    again = [e["said"] for e in rounds[1] if "said" in e]
    asked = [s for s in said if s["key"] and not s["cached"]]
    return {
        "what": "oracle and cheat-pester on " + ", ".join(REWORDED) + ", every reply reworded by the bundled "
        "SmolLM2-135M (`egym models serve smollm2`, temperature 0) with `-H coworkers.mode=paraphrase`; "
        "then the same rollouts again",
        "replies": len(said),
        "in_the_models_words": sum(s["source"] == "model" for s in said),
        "from_rules_share": round(sum(s["source"] == "rules" for s in said) / len(said), 3) if said else None,
        "rejected_because": dict(
            collections.Counter(s["rejected"].split(" ")[0] for s in said if s["rejected"]).most_common()
        ),
        "rewording_s": summary([s["word_seconds"] for s in asked]) if asked else None,
        "second_round_from_cache": f"{sum(s['cached'] for s in again)} of {len(again)}",
        "second_round_same_words": [s["message"] for s in again] == [s["message"] for s in said],
        "errors": [e["error"] for r in rounds for e in r if "error" in e],
        "examples_posted": [s["message"] for s in said if s["source"] == "model"][:4],
        "examples_rejected": [
            {"model": s["model_text"], "why": s["rejected"]} for s in said if s["rejected"]
        ][:4],
    }


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
            "errors": errors,
            "reworded_by_a_model": reworded(),
        },
    )


if __name__ == "__main__":
    main()
