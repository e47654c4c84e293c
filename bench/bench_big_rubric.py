"""A 200,000-item rubric: expansion, grading, the Grade's JSON round trip and the terminal summary.

    .venv/bin/python bench/bench_big_rubric.py   -> bench/results/big_rubric.json

One `foreach` item over 200,000 literal values, each a final-answer check (no Docker:
the point is the grader's own overhead per item, which a 200-item rubric hides).
The reference is the same pipeline on 2,000 items in the same run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from bench.common import write
from core.trajectory import Trajectory
from grader.expand import expand_items
from grader.grade import Grade
from grader.loader import parse_rubric
from grader.probe import StaticProbe
from grader.score import grade
from gym.batch.view import grade_view

SIZES = (2_000, 200_000)


def rubric_text(n: int) -> str:
    item = {
        "id": "has-{{n}}",
        "description": "The answer names ticket {{n}}",
        "points": 1,
        "kind": "python",
        "check": "transcript.final_answer_contains",
        "args": {"regex": "ticket {{n}}\\b"},
        "foreach": {"values": list(range(n)), "as": "n"},
    }
    return json.dumps({"task": "bench/big", "items": [item]})


def stages(n: int) -> dict[str, float]:
    timings = {}
    t = time.perf_counter()
    rubric, problems = parse_rubric(rubric_text(n))
    assert rubric is not None and not problems
    timings["load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    items = expand_items(rubric)
    timings["expand_s"] = time.perf_counter() - t
    answer = " ".join(f"ticket {i}" for i in range(0, 2000, 2))  # the same answer at every size
    t = time.perf_counter()
    result = grade(rubric, StaticProbe(), Trajectory(task="bench/big", policy="bench", final_answer=answer))
    timings["grade_s"] = time.perf_counter() - t
    assert len(result.items) == len(items) == n and result.earned == 1000
    t = time.perf_counter()
    again = Grade.model_validate_json(result.model_dump_json())
    timings["json_round_trip_s"] = time.perf_counter() - t
    assert again == result
    t = time.perf_counter()
    console = Console(record=True, width=160, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(grade_view(result))
    timings["summary_print_s"] = time.perf_counter() - t
    return {k: round(v, 3) for k, v in timings.items()}


def main() -> None:
    results = {str(n): stages(n) for n in SIZES}
    small, big = results[str(SIZES[0])], results[str(SIZES[1])]
    per_item_us = {
        k.removesuffix("_s"): round(big[k] / SIZES[1] * 1e6, 2)
        for k in ("expand_s", "grade_s", "json_round_trip_s")
    }
    write(
        "big_rubric",
        {
            "items": results,
            "per_item_us_at_200k": per_item_us,
            "grade_ratio_200k_over_2k": round(big["grade_s"] / small["grade_s"], 1),
            "items_ratio": SIZES[1] // SIZES[0],
        },
    )


if __name__ == "__main__":
    main()
