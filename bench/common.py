"""Small helpers shared by the bench scripts: stats, machine facts, writing results."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
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


# What a long bench's child processes compute with, whatever this CPU offers beyond AVX2: torch's own
# kernels (ATen), MKL's and oneDNN's each pick a code path by CPU, and their float sums differ in the last
# bits. Measured 2026-11-29: bench_bands' SFT, trained again from the same data on another machine, gave
# other weights (final loss 0.1376979 against 0.1377058); three AdamW steps of SmolLM2 here give other
# bits with torch's kernels at `default` than at AVX2, the same with these settings as without (this
# CPU is AVX2), at the same speed. With them an AVX-512 machine takes the AVX2 paths too: on 2026-12-02
# one (an AMD EPYC with AVX-512) trained that SFT to the same key and final loss as the AVX2 ones. They
# do not hold across vendors: the same day an Intel Xeon (AVX-512, AMX) trained other weights (final
# loss 0.1376978 against 0.1376979), most likely in MKL, whose AVX2 branch on an Intel CPU need not be
# the path it takes on an AMD one (bench/numerics_probe.py gives other bits here with MKL_CBWR at AVX2,
# COMPATIBLE or AUTO, the same with ONEDNN_MAX_CPU_ISA at AVX2 or SSE41). The journals check the model's key, so a miss stops a bench.
PINNED_NUMERICS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


# MKL_CBWR=AVX2 is MKL's AVX2 branch on an Intel CPU only: on another it takes its AUTO branch (oneMKL
# developer guide, "Getting Started with Conditional Numerical Reproducibility"), which on an AMD CPU runs
# MKL's kernels for that CPU. A machine of the other vendor may still compute the same bits under another
# branch: these are the ones giving distinct bits on an Intel Xeon with AVX-512 (2026-12-03: six
# fingerprints with AVX2's; SSE2 computes COMPATIBLE's bits there, AVX SSE4_2's, AVX512 AUTO's), fastest
# first. Its float32 matmuls (1024x576 by 576x1536) ran at 157, 137, 96, 33 and 20 GFLOP/s under them,
# against 104 under AVX2: a run under the last two is 3 and 5 times slower (bench_bands' SFT took 350 s
# for its first step under COMPATIBLE, 2,722 s for all 57 under AVX2).
MKL_BRANCHES = ("AUTO", "AUTO,STRICT", "AVX2,STRICT", "SSE4_2", "COMPATIBLE")


def numerics_probe(**env: str) -> str:
    """bench/numerics_probe.py's fingerprint of this CPU's kernels, computed in a child process with this
    process's environment (the pins, once pin_numerics ran) and `env` over it."""
    probe = Path(__file__).resolve().parent / "numerics_probe.py"
    return subprocess.run(
        [sys.executable, str(probe)], capture_output=True, text=True, check=True, env={**os.environ, **env}
    ).stdout.strip()


def mkl_branch_computing(fingerprint: str) -> str | None:
    """The first of MKL_BRANCHES under which this CPU prints `fingerprint` (the other pins as they are), or
    None. About ten seconds a branch on 2 cores."""
    return next((b for b in MKL_BRANCHES if numerics_probe(MKL_CBWR=b) == fingerprint), None)


def pin_numerics() -> None:
    """Pin PINNED_NUMERICS for this process's children (a variable already set is the user's choice)."""
    for name, value in PINNED_NUMERICS.items():
        os.environ.setdefault(name, value)


def cpu() -> str:
    """The CPU's model name and whether it has AVX-512 (which of torch's kernels run by default)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    name = next(
        (line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), ""
    )
    return f"{name or platform.processor() or 'unknown'}{', AVX-512' if ' avx512f' in info else ''}"


def machine() -> dict[str, object]:
    return {
        "cores": os.cpu_count(),
        "cpu": cpu(),
        "python": platform.python_version(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def write(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n")
    print(f"wrote {path.relative_to(RESULTS.parent.parent)}")
    return path
