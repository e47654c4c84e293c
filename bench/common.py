"""Small helpers shared by the bench scripts: stats, machine facts, writing results."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {
        "median": round(statistics.median(ordered), 4),
        "p90": round(p90, 4),
        "min": round(ordered[0], 4),
        "n": len(ordered),
    }


def machine() -> dict[str, object]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def write(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n")
    print(f"wrote {path.relative_to(RESULTS.parent.parent)}")
    return path
