"""Grader timings: a 200-item deterministic rubric against a live sandbox; a judge re-grade with a warm cache.

    .venv/bin/python bench/bench_grader.py   -> bench/results/grader.json

Each grade uses a fresh SandboxProbe (cold caches: SQL session started, chat
snapshot taken), as a rollout would. The judge is served by the local
OpenAI-protocol test server with a fixed per-call latency.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from core.content_cache import ContentCache
from core.trajectory import Trajectory
from grader.expand import expand_items
from grader.judge import Judge, JudgeConfig
from grader.loader import parse_rubric
from grader.probe import SandboxProbe, StaticProbe
from grader.score import grade
from gym.sandbox import DockerSandbox
from gym.sandbox.overlay import overlay_tar
from gym.tasks import Overlay
from tests.fakes.openai_server import FakeOpenAI, Reply

ROWS = 150
RUNS = 7
JUDGE_ITEMS = 20
JUDGE_LATENCY_S = 0.2

SQL = "CREATE TABLE invoices (number text PRIMARY KEY, amount numeric(10,2), status text);\n" + "".join(
    f"INSERT INTO invoices VALUES ('INV-{i:04d}', {i * 10 + 0.5}, '{'paid' if i % 3 else 'open'}');\n"
    for i in range(ROWS)
)
CHAT = """
agent_user: dana
team: {name: acme, display_name: Acme}
users: [{username: dana}, {username: raj}]
channels: [{name: finance, members: [dana, raj]}]
posts:
""" + "".join(f'  - {{channel: finance, user: dana, message: "INV-{i:04d} checked"}}\n' for i in range(20))


def rubric_items() -> list[dict]:
    def py(id_: str, check: str, args: dict, **kw) -> dict:
        return {
            "id": id_,
            "description": id_,
            "points": 1,
            "kind": "python",
            "check": check,
            "args": args,
            **kw,
        }

    values = [{"n": f"INV-{i:04d}", "status": "paid" if i % 3 else "open"} for i in range(ROWS)]
    return [
        py(
            "status-{{n}}",
            "sql.value_equals",
            {
                "query": "SELECT status FROM invoices WHERE number = %(n)s",
                "params": {"n": "{{n}}"},
                "expected": "{{status}}",
            },
            foreach={"values": values},
        ),
        py(
            "posted-{{value}}",
            "chat.message_exists",
            {"channel": "finance", "text": "{{value}} checked"},
            foreach={"values": [f"INV-{i:04d}" for i in range(20)]},
        ),
        py(
            "file-{{value}}",
            "files.file_contains",
            {"path": "report.md", "text": "{{value}}"},
            foreach={"values": [f"line {i}" for i in range(10)]},
        ),
        py(
            "open-count",
            "sql.count",
            {"query": "SELECT 1 FROM invoices WHERE status = 'open'", "equals": ROWS // 3},
        ),
        *[py(f"answer-{i}", "transcript.final_answer_contains", {"text": f"item {i}"}) for i in range(19)],
    ]


def judge_rubric():
    items = [
        {
            "id": f"j{i}",
            "description": f"criterion {i}",
            "points": 2,
            "kind": "judge",
            "prompt": f"Is criterion {i} met?",
            "evidence": [{"type": "final_answer"}],
        }
        for i in range(JUDGE_ITEMS)
    ]
    rubric, problems = parse_rubric(json.dumps({"task": "bench/judge", "items": items}))
    assert not problems, problems
    return rubric


def bench_deterministic() -> dict:
    rubric, problems = parse_rubric(json.dumps({"task": "bench/grader", "items": rubric_items()}))
    assert not problems, problems
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "data.sql").write_text(SQL)
        (Path(tmp) / "chat.yaml").write_text(CHAT)
        (Path(tmp) / "ws").mkdir()
        (Path(tmp) / "ws" / "report.md").write_text("\n".join(f"line {i}" for i in range(10)))
        overlay = overlay_tar((Overlay(sql=["data.sql"], chat=["chat.yaml"], workspace="ws"), Path(tmp)))
    trajectory = Trajectory(
        task="bench/grader", policy="bench", final_answer=" ".join(f"item {i}" for i in range(19))
    )
    sandbox = DockerSandbox.start(apps=("db", "chat"), overlay=overlay, run_id="bench-grader")
    try:
        times, chat_times, sql_times, result = [], [], [], None
        for _ in range(RUNS):
            with SandboxProbe(sandbox) as probe:
                started = time.perf_counter()
                result = grade(rubric, probe, trajectory)
                times.append(time.perf_counter() - started)
            with SandboxProbe(sandbox) as probe:  # the parts alone: the chat snapshot, all SQL pipelined
                started = time.perf_counter()
                probe.chat()
                chat_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                probe.prefetch(
                    queries=[
                        (i.args["query"], i.args.get("params"))
                        for i in expand_items(rubric)
                        if i.check.startswith("sql.")
                    ]
                )
                sql_times.append(time.perf_counter() - started)
    finally:
        sandbox.close()
    # The rubric's 200 items, and the damage section every grade adds (grader/damage.py).
    rubric_items_graded = [i for i in result.items if i.section != "damage"] if result else []
    assert len(rubric_items_graded) == 200 and str(result) == "200/200", result and result.summary()
    return {
        "items": len(rubric_items_graded),
        "damage_items": len(result.items) - len(rubric_items_graded),
        "grade_s": summary(times),
        "first_grade_s": round(times[0], 4),
        "of_which_chat_snapshot_s": summary(chat_times),
        "of_which_151_sql_queries_s": summary(sql_times),
    }


def bench_documents() -> dict:
    """Every document a rubric names (the acme-style office files of the initial state): read in one
    LibreOffice run, and again once the same bytes were read before (hashed, not read)."""
    from tests.grader.checks.test_documents import FILES

    with tempfile.TemporaryDirectory() as tmp:
        for name, data in FILES.items():
            (Path(tmp) / "ws" / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "ws" / name).write_bytes(data)
        overlay = overlay_tar((Overlay(workspace="ws"), Path(tmp)))
    sandbox = DockerSandbox.start(overlay=overlay, run_id="bench-grader")
    folder = tempfile.TemporaryDirectory()
    known = ContentCache(Path(folder.name))

    def read_all(reads: ContentCache, names: list[str]) -> float:
        with SandboxProbe(sandbox, reads=reads) as probe:
            started = time.perf_counter()
            probe.prefetch(names)
            return time.perf_counter() - started

    try:
        with SandboxProbe(sandbox, reads=known) as probe:  # an unreadable file is never kept: left out
            readable = [name for name in FILES if "error" not in probe.document(name)]
        pairs = [(read_all(ContentCache(None), readable), read_all(known, readable)) for _ in range(3)]
    finally:
        sandbox.close()
        folder.cleanup()
    cold, warm = summary([c for c, _ in pairs]), summary([w for _, w in pairs])
    return {
        "documents": len(readable),
        "read_all_s": cold,
        "read_before_s": warm,
        "read_before_speedup": round(cold["median"] / warm["median"], 1),
    }


def bench_judge() -> dict:
    rubric = judge_rubric()
    trajectory = Trajectory(task="bench/judge", policy="bench", final_answer="All criteria are met.")
    reply = Reply(
        body=Reply.text(json.dumps({"reason": "ok", "verdict": "pass"})).body, delay_s=JUDGE_LATENCY_S
    )
    with tempfile.TemporaryDirectory() as cache, FakeOpenAI(lambda req: reply) as server:

        def make() -> Judge:
            return Judge(
                JudgeConfig(
                    base_url=server.base_url,
                    api_key="bench",
                    model="judge",
                    cache_dir=Path(cache),
                    max_concurrency=8,
                )
            )

        started = time.perf_counter()
        cold = grade(rubric, StaticProbe(), trajectory, judge=make())
        cold_s = time.perf_counter() - started
        warm_times = []
        for _ in range(RUNS):
            judge = make()
            started = time.perf_counter()
            warm = grade(rubric, StaticProbe(), trajectory, judge=judge)
            warm_times.append(time.perf_counter() - started)
            assert judge.calls == 0 and str(warm) == str(cold)
    return {
        "judge_items": JUDGE_ITEMS,
        "judge_latency_s": JUDGE_LATENCY_S,
        "max_concurrency": 8,
        "cold_grade_s": round(cold_s, 4),
        "warm_cache_regrade_s": summary(warm_times),
        "requests": len(server.requests),
    }


def main() -> None:
    deterministic = bench_deterministic()
    docs = bench_documents()
    judge = bench_judge()
    write(
        "grader",
        {
            "deterministic_200_items_live_sandbox": deterministic,
            "documents_one_reader_run": docs,
            "judge_regrade": judge,
            "target": {"grade_200_items_s": 1.0},
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
    )
    print(
        f"200 items: median {deterministic['grade_s']['median']:.3f}s (first {deterministic['first_grade_s']:.3f}s) | "
        f"{docs['documents']} documents {docs['read_all_s']['median']:.2f}s, read before {docs['read_before_s']['median']:.3f}s | judge x{JUDGE_ITEMS}: cold {judge['cold_grade_s']:.3f}s, warm median {judge['warm_cache_regrade_s']['median']:.4f}s"
    )


if __name__ == "__main__":
    main()
