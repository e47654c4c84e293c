"""The training page's curriculum section: levels per band per step (a chart) and each band move (a table),
from metrics lines in the trainer's own format (trainer.curriculum.band_moves)."""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient

from gym.dashboard.app import DashboardConfig, create_app
from gym.store import Store
from trainer.curriculum import band_moves

# The bands of three levels after each step: price L0 is learned, then L1 comes into reach.
HISTORY = [
    {"acme/price L0": "hard", "acme/price L1": "hard", "acme/close": "hard"},
    {"acme/price L0": "target", "acme/price L1": "hard", "acme/close": "hard"},
    {"acme/price L0": "too-easy", "acme/price L1": "target", "acme/close": "hard"},
    {"acme/price L0": "too-easy", "acme/price L1": "target", "acme/close": "hard"},
]


@pytest.fixture
def pages(tmp_path):
    grpo = tmp_path / "grpo"
    grpo.mkdir()
    lines = [
        {"step": step, "reward_mean": 0.1 * step, "pass_rate": 0.1 * step} | band_moves(before, after)
        for step, (before, after) in enumerate(zip(HISTORY, HISTORY[1:], strict=False), start=1)
    ]
    (grpo / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    sft = tmp_path / "sft"
    sft.mkdir()
    (sft / "metrics.jsonl").write_text(json.dumps({"step": 1, "loss": 2.0}) + "\n")
    Store(str(tmp_path / "runs.db")).close()
    app = create_app(DashboardConfig(store=str(tmp_path / "runs.db"), metrics=[tmp_path], tasks_dir=tmp_path))
    with TestClient(app) as http:
        listing = http.get("/training").text
        ids = dict(
            (folder, file_id)
            for file_id, folder in re.findall(
                r'data-file="(\w+)">\s*<td><a href="[^"]+">[^<]*/(\w+)/metrics', listing
            )
        )
        yield {folder: http.get(f"/training/{file_id}").text for folder, file_id in ids.items()}


def _counts(chart: str) -> dict[str, list[float]]:
    """Each drawn band's counts, in step order, read from the marks' data attributes."""
    out = {}
    for band, marks in re.findall(r'<g class="series s\d+ ([\w-]+)" data-series="\1">(.*?)</g>', chart):
        out[band] = [float(y) for y in re.findall(r'data-y="([\d.]+)"', marks)]
    return out


def test_the_chart_counts_levels_per_band_for_each_step(pages):
    html = pages["grpo"]
    chart = html[html.index('id="band-chart"') : html.index('id="band-changes"')]
    # bands no level was ever in (too-hard, unbanded) are left out
    assert _counts(chart) == {"hard": [2, 1, 1], "target": [1, 1, 1], "too-easy": [0, 1, 1]}
    assert 'class="swatch s1 target"' in chart  # coloured as the band, in the legend too


def test_the_table_lists_each_move_newest_first(pages):
    html = pages["grpo"]
    table = html[html.index('id="band-changes"') :]
    rows = re.findall(
        r'<tr data-level="([^"]+)"><td class="num">(\d+)</td>.*?class="band ([\w-]+)".*?class="band ([\w-]+)"',
        table,
    )
    assert rows == [
        ("acme/price L1", "2", "hard", "target"),
        ("acme/price L0", "2", "target", "too-easy"),
        ("acme/price L0", "1", "hard", "target"),
    ]
    # the counts are numbers of the step too, so the steps table has them as columns
    assert '<th class="num">bands.too-easy</th>' in html


def test_a_file_without_bands_has_no_curriculum_section(pages):
    assert 'id="curriculum"' not in pages["sft"]
    assert 'id="loss-chart"' in pages["sft"]
