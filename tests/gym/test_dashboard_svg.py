"""The server-made SVG charts: well-formed, escaped, and drawing the numbers they are given."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from gym.dashboard.svg import Bar, Point, Series, bar_chart, histogram, line_chart, nice_ticks, standalone

NS = {"s": "http://www.w3.org/2000/svg"}


def parse(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))


def test_histogram_draws_one_bar_per_bin_with_heights_proportional_to_counts():
    svg = parse(histogram([1, 0, 4, 2], [0, 0.25, 0.5, 0.75, 1.0], title="scores"))
    bars = svg.findall(".//s:rect[@class='bar']", NS)
    assert [int(b.get("data-count")) for b in bars] == [1, 0, 4, 2]
    heights = [float(b.get("height")) for b in bars]
    assert heights[1] == 0
    assert heights[2] == pytest.approx(4 * heights[0], rel=0.02)
    assert heights[3] == pytest.approx(2 * heights[0], rel=0.02)
    # bars sit side by side in edge order
    xs = [float(b.get("x")) for b in bars]
    assert xs == sorted(xs)
    assert [b.get("data-lo") for b in bars] == ["0", "0.25", "0.5", "0.75"]


def test_histogram_rejects_mismatched_edges_and_shows_no_data_when_empty():
    with pytest.raises(ValueError, match="len\\(edges\\)"):
        histogram([1, 2], [0, 1], title="x")
    svg = parse(histogram([0, 0], [0, 0.5, 1], title="x"))
    assert svg.find(".//s:text[@class='empty']", NS).text == "no data"


def test_labels_are_escaped_not_injected():
    evil = "<script>alert(1)</script> & co"
    markup = str(bar_chart([Bar(evil, 0.5)], title=evil))
    assert "<script>" not in markup
    svg = parse(markup)
    assert svg.find("s:title", NS).text == evil
    assert svg.find(".//s:g[@class='bar-row']", NS).get("data-label") == evil


def test_line_chart_points_whiskers_and_band_follow_the_data():
    pts = [Point(1, 0.2, 0.1, 0.4), Point(2, 0.5, 0.3, 0.7), Point(3, 0.9, 0.6, 1.0)]
    svg = parse(line_chart([Series("pass rate", pts)], title="calibration"))
    dots = svg.findall(".//s:circle[@class='point']", NS)
    assert [float(d.get("data-y")) for d in dots] == [0.2, 0.5, 0.9]
    assert [float(d.get("data-lo")) for d in dots] == [0.1, 0.3, 0.6]
    cys = [float(d.get("cy")) for d in dots]
    assert cys[0] > cys[1] > cys[2]  # higher value, higher on the page (smaller y)
    whiskers = svg.findall(".//s:line[@class='whisker']", NS)
    assert len(whiskers) == 3
    for whisker, dot in zip(whiskers, dots, strict=True):
        assert float(whisker.get("y2")) < float(dot.get("cy")) < float(whisker.get("y1"))
    assert svg.find(".//s:polygon[@class='band']", NS) is not None
    assert svg.find(".//s:polyline[@class='line']", NS) is not None


def test_line_chart_with_two_series_has_a_legend_and_a_single_point_is_centred():
    svg = parse(line_chart([Series("a", [Point(5, 0.5)]), Series("b", [Point(5, 0.25)])], title="t"))
    names = [t.text for t in svg.findall(".//s:g[@class='legend']/s:text", NS)]
    assert names == ["a", "b"]
    dots = svg.findall(".//s:circle", NS)
    assert dots[0].get("cx") == dots[1].get("cx")
    assert svg.find(".//s:polyline", NS) is None  # one point: no line


def test_line_chart_free_y_range_covers_values_above_one():
    svg = parse(line_chart([Series("loss", [Point(0, 3.0), Point(1, 7.5)])], title="t", y_range=None))
    dots = svg.findall(".//s:circle", NS)
    assert all(14 <= float(d.get("cy")) <= 200 for d in dots)


def test_bar_chart_widths_scale_with_values():
    svg = parse(bar_chart([Bar("a", 1.0), Bar("b", 0.25, note="1/4")], title="items"))
    rects = svg.findall(".//s:g[@class='bar-row']/s:rect", NS)
    assert float(rects[0].get("width")) == pytest.approx(4 * float(rects[1].get("width")), rel=0.02)
    texts = [t.text for t in svg.findall(".//s:g[@class='bar-row']/s:text[@class='tick']", NS)]
    assert texts == ["100%", "25% 1/4"]


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
        (0, 7, [0, 2, 4, 6]),
        (0, 10, [0, 2, 4, 6, 8, 10]),
        (3, 3, [3]),
    ],
)
def test_nice_ticks(lo, hi, expected):
    assert nice_ticks(lo, hi) == pytest.approx(expected)


def test_line_chart_without_band_keeps_the_whiskers():
    pts = [Point(1, 0.2, 0.1, 0.4), Point(2, 0.5, 0.3, 0.7)]
    svg = parse(line_chart([Series("runs", pts)], title="t", band=False))
    assert svg.find(".//s:polygon", NS) is None
    assert len(svg.findall(".//s:line[@class='whisker']", NS)) == 2


def test_long_series_drop_whiskers_then_dots_but_keep_the_line():
    many = [Point(i, 0.5, 0.4, 0.6) for i in range(100)]
    svg = parse(line_chart([Series("s", many)], title="t"))
    assert svg.findall(".//s:line[@class='whisker']", NS) == []
    assert len(svg.findall(".//s:circle", NS)) == 100 and svg.find(".//s:polygon", NS) is not None
    huge = parse(line_chart([Series("s", [Point(i, 0.5) for i in range(1000)])], title="t"))
    assert huge.findall(".//s:circle", NS) == [] and huge.find(".//s:polyline", NS) is not None


def test_a_standalone_chart_is_a_well_formed_svg_file_carrying_its_own_colours():
    chart = line_chart([Series("train", [Point(1, 0.2), Point(2, 0.4)])], title="reward")
    root = ET.fromstring(standalone(chart).split("?>", 1)[1])
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    style = root.find("s:style", NS).text
    assert "--accent: #2f6fde" in style and "svg.chart .series .line" in style  # not black fills
    assert [float(p.get("data-y")) for p in root.findall(".//s:circle", NS)] == [0.2, 0.4]
