"""Training: reward mean and pass rate per step, from a trainer's metrics JSONL file.

Files are found under the configured paths only and addressed by a hash of
their path, so the URL cannot name an arbitrary file on the machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from gym.dashboard import svg
from gym.dashboard.metrics import MetricsFile, find_metrics_files, read_metrics
from gym.dashboard.pages.common import ctx, not_found

TABLE_ROWS = 200  # the table shows the latest steps; the charts show them all


def file_id(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:12]


def training_list(request: Request) -> Response:
    c = ctx(request)
    files = [(file_id(p), p, read_metrics(p)) for p in find_metrics_files(c.config.metrics)]
    return c.render(request, "training_list.html", files=files, roots=c.config.metrics)


def training_detail(request: Request) -> Response:
    c = ctx(request)
    wanted = request.path_params["file_id"]
    path = next((p for p in find_metrics_files(c.config.metrics) if file_id(p) == wanted), None)
    if path is None:
        raise not_found(f"No training metrics file '{wanted}' under the configured metrics paths.")
    metrics = read_metrics(path)
    columns = metrics.columns()
    rows = [s.numbers() for s in metrics.steps[-TABLE_ROWS:]]
    return c.render(request, "training.html", path=path, metrics=metrics, columns=columns, rows=rows,
                    reward_chart=reward_chart(metrics), pass_chart=pass_chart(metrics))


def reward_chart(metrics: MetricsFile):
    """Reward mean per step, with ±1 std as the band when the trainer logged it."""
    points = []
    for s in metrics.steps:
        if s.reward_mean is None:
            continue
        lo = hi = None
        if s.reward_std is not None:
            lo, hi = s.reward_mean - s.reward_std, s.reward_mean + s.reward_std
        points.append(svg.Point(s.step, s.reward_mean, lo, hi, label=f"step {s.step}"))
    values = [v for p in points for v in (p.y, p.lo, p.hi) if v is not None]
    y_range = (0.0, 1.0) if values and min(values) >= 0 and max(values) <= 1 else None
    return svg.line_chart([svg.Series("reward mean", points)], title="Reward mean per step (band: ±1 std)",
                          x_label="step", y_label="reward", y_range=y_range)


def pass_chart(metrics: MetricsFile):
    points = [svg.Point(s.step, s.pass_rate, label=f"step {s.step}") for s in metrics.steps
              if s.pass_rate is not None]  # fmt: skip
    return svg.line_chart([svg.Series("pass rate", points)], title="Pass rate per step",
                          x_label="step", y_label="pass rate")
