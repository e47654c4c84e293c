"""Training: reward mean and pass rate per step (GRPO), or the loss per step (SFT), from a metrics JSONL file;
for GRPO also how the curriculum's levels move between bands (counts per band, and each move).

Files are found under the configured paths only and addressed by a hash of
their path, so the URL cannot name an arbitrary file on the machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from gym.dashboard import queries, svg
from gym.dashboard.metrics import BandChange, MetricsFile, StepMetrics, find_metrics_files, read_metrics
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
    with c.store.session() as s:
        stored = queries.training_runs(s, path.parent)
    return c.render(
        request,
        "training.html",
        path=path,
        metrics=metrics,
        columns=columns,
        rows=rows,
        reward_chart=reward_chart(metrics),
        pass_chart=pass_chart(metrics),
        loss_chart=loss_chart(metrics),
        band_chart=band_chart(metrics),
        band_moves=band_moves(metrics),
        stored=stored,
        train_run=next((run for run, _ in stored if not run.endswith("-eval")), None),
    )


def _series(name: str, steps: list[StepMetrics], field: str, std_field: str | None = None) -> svg.Series:
    """One metric per step; with `std_field`, ±1 std becomes the point's interval (drawn as a band)."""
    points = []
    for s in steps:
        numbers = s.numbers()
        value = numbers.get(field)
        if value is None:
            continue
        std = numbers.get(std_field) if std_field else None
        lo, hi = (value - std, value + std) if std is not None else (None, None)
        points.append(svg.Point(s.step, value, lo, hi, label=f"{name} step {s.step}"))
    return svg.Series(name, points)


def _unit_clipped(series: svg.Series) -> svg.Series:
    """The ±std band cut to [0, 1]: rewards are normalized scores, a band below 0 would be noise."""
    return svg.Series(
        series.name,
        [
            svg.Point(
                p.x,
                p.y,
                None if p.lo is None else max(p.lo, 0.0),
                None if p.hi is None else min(p.hi, 1.0),
                p.label,
            )
            for p in series.points
        ],
    )


def reward_chart(metrics: MetricsFile):
    """Reward mean per step (band: ±1 std when logged), and the eval split's mean when evaluated."""
    series = [
        _series("train", metrics.steps, "reward_mean", "reward_std"),
        _series("eval", metrics.steps, "eval_reward_mean"),
    ]
    series = [s for s in series if s.points]
    unit = all(0 <= p.y <= 1 for s in series for p in s.points)
    return svg.line_chart(
        [_unit_clipped(s) for s in series] if unit else series,
        title="Reward mean per step (band: ±1 std)",
        x_label="step",
        y_label="reward",
        y_range=(0.0, 1.0) if unit else None,
    )


def pass_chart(metrics: MetricsFile):
    series = [_series("train", metrics.steps, "pass_rate"), _series("eval", metrics.steps, "eval_pass_rate")]
    return svg.line_chart(
        [s for s in series if s.points], title="Pass rate per step", x_label="step", y_label="pass rate"
    )


def loss_chart(metrics: MetricsFile):
    """The training loss per step, for what `egym sft` logs; None for a GRPO file (its rewards are charted:
    its `loss` is the policy-gradient surrogate, not a curve to read progress from)."""
    series = _series("train", metrics.steps, "loss")
    if not series.points or _series("train", metrics.steps, "reward_mean").points:
        return None
    return svg.line_chart([series], title="Loss per step", x_label="step", y_label="loss")


def band_chart(metrics: MetricsFile):
    """Family levels (and plain tasks) in each curriculum band after each step, one line per band that
    ever held one; None for a file without bands (SFT, or a trainer from before they were logged)."""
    counts = [(s.step, s.bands) for s in metrics.steps if s.bands is not None]
    logged = dict.fromkeys(band for _, bands in counts for band in bands)  # in the trainer's order
    names = [band for band in logged if any(bands.get(band) for _, bands in counts)]
    if not names:
        return None
    series = [
        svg.Series(
            band,
            [svg.Point(step, bands.get(band, 0), label=f"{band} step {step}") for step, bands in counts],
            css=band,
        )
        for band in names
    ]
    return svg.line_chart(
        series, title="Levels per curriculum band", x_label="step", y_label="levels", y_range=None, band=False
    )


def band_moves(metrics: MetricsFile) -> list[tuple[int, BandChange]]:
    """(step, change) for every level that changed band, newest first, at most TABLE_ROWS."""
    moves = [(s.step, change) for s in metrics.steps for change in s.band_changes]
    return moves[::-1][:TABLE_ROWS]
