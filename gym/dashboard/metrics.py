"""Training metrics as the trainer writes them: one JSON object per step in a JSONL file.

The trainer logs many fields per step (reward mean/std, pass rate, advantage
stats, KL, entropy, clip fraction, tokens, timings, the curriculum's bands);
the dashboard charts a few and tabulates the rest, so unknown fields are kept
rather than refused. A line that does not parse (the trainer may be mid-write)
is skipped and reported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# Files the trainer is known to write; other *.jsonl files in the folders are listed too.
METRICS_GLOB = "*.jsonl"
MAX_DEPTH = 4


class BandChange(BaseModel):
    """A family level (or plain task) whose curriculum band changed during a step."""

    model_config = ConfigDict(populate_by_name=True)

    level: str
    from_: str = Field(alias="from")
    to: str


class StepMetrics(BaseModel):
    """One step's line. `extra="allow"`: this is the trainer's format; we read what we chart."""

    model_config = ConfigDict(extra="allow")

    step: int
    reward_mean: float | None = None
    reward_std: float | None = None
    pass_rate: float | None = None
    bands: dict[str, int] | None = None  # family levels per curriculum band after the step
    band_changes: list[BandChange] = Field(default_factory=list)

    def numbers(self) -> dict[str, float]:
        """Every finite numeric field, for the table (nested dicts flattened with dots)."""
        return dict(_flatten(self.model_dump()))


def _flatten(data: dict, prefix: str = "") -> Iterable[tuple[str, float]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{name}.")
        elif isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            yield name, float(value)


@dataclass
class MetricsFile:
    """A parsed metrics file: its steps in order and the lines that could not be read."""

    path: Path
    steps: list[StepMetrics] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def columns(self) -> list[str]:
        """Numeric field names in first-seen order, `step` first."""
        seen: dict[str, None] = {"step": None}
        for step in self.steps:
            seen.update(dict.fromkeys(step.numbers()))
        return list(seen)


def read_metrics(path: Path) -> MetricsFile:
    """Parse a JSONL metrics file; later lines for the same step replace earlier ones (a resumed run)."""
    out = MetricsFile(path)
    by_step: dict[int, StepMetrics] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                step = StepMetrics.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError, TypeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else _first_error(exc)
                out.skipped.append(f"line {number}: {reason}")
                continue
            by_step[step.step] = step
    out.steps = [by_step[k] for k in sorted(by_step)]
    return out


def _first_error(exc: ValidationError | TypeError) -> str:
    """What is wrong with a line that is JSON but not a step, in a few words."""
    if isinstance(exc, TypeError) or not exc.errors():
        return "not an object with an integer 'step'"
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc']) or 'line'}: {error['msg']}"


def find_metrics_files(roots: Sequence[Path]) -> list[Path]:
    """Every metrics file under the configured roots (a root may itself be a file), newest first."""
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root.resolve())
        elif root.is_dir():
            found.update(
                p.resolve()
                for p in root.rglob(METRICS_GLOB)
                if len(p.relative_to(root).parts) <= MAX_DEPTH and p.is_file()
            )
    return sorted(found, key=lambda p: (-p.stat().st_mtime, str(p)))
