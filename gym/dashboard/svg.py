"""Charts as inline SVG made on the server: no JavaScript, no CDN, works offline.

Each chart is built with ElementTree (which escapes every label) and returned
as `markupsafe.Markup` for the templates. Marks carry `data-*` attributes with
the numbers they draw, so tests (and curious users) can read them back, and a
`<title>` child, which browsers show as a tooltip.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

# Plot area margins inside the SVG viewBox, in user units.
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 14, 30
# Beyond these many points a series drops its per-point whiskers (the band remains), then its dots.
MAX_WHISKERS, MAX_DOTS = 25, 200


@dataclass(frozen=True)
class Point:
    """One value of a line chart, with an optional interval drawn as a whisker."""

    x: float
    y: float
    lo: float | None = None
    hi: float | None = None
    label: str = ""


@dataclass(frozen=True)
class Series:
    """One line; `css` adds class names to its marks and legend swatch (a colour that means something)."""

    name: str
    points: Sequence[Point] = field(default_factory=tuple)
    css: str = ""


@dataclass(frozen=True)
class Bar:
    """One horizontal bar; `href` makes the label a link."""

    label: str
    value: float
    note: str = ""
    href: str | None = None


@dataclass(frozen=True)
class _Frame:
    """Maps data coordinates to SVG coordinates."""

    width: int
    height: int
    x0: float
    x1: float
    y0: float
    y1: float

    def sx(self, x: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return LEFT + (x - self.x0) / span * (self.width - LEFT - RIGHT)

    def sy(self, y: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return self.height - BOTTOM - (y - self.y0) / span * (self.height - TOP - BOTTOM)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0]
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    # the round step whose tick count comes closest to `count` (ties: the larger step)
    step = min((m * power for m in (10, 5, 2, 1)), key=lambda s: abs((hi - lo) / s + 1 - count))
    start = math.ceil(lo / step - 1e-9) * step
    ticks, value = [], start
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _fmt(v: float) -> str:
    """Short number for coordinates and labels."""
    return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def _svg(width: int, height: int, title: str, css: str) -> ET.Element:
    # width/height give the natural size; CSS (max-width: 100%, height: auto) shrinks it in narrow columns
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {width} {height}",
            "width": str(width),
            "height": str(height),
            "class": f"chart {css}",
            "role": "img",
            "aria-label": title,
        },
    )
    ET.SubElement(svg, "title").text = title
    return svg


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    """SubElement taking Python values; `class_` and `data_x` become `class` and `data-x`."""
    clean = {
        k.rstrip("_").replace("_", "-"): _fmt(v) if isinstance(v, float) else str(v) for k, v in attrs.items()
    }
    el = ET.SubElement(parent, tag, clean)
    if text is not None:
        el.text = text
    return el


def _markup(svg: ET.Element) -> Markup:
    return Markup(ET.tostring(svg, encoding="unicode"))


def _empty(width: int, height: int, title: str, css: str) -> Markup:
    height = min(height, 80)  # an empty chart need not hold the page's space
    svg = _svg(width, height, title, css)
    _sub(svg, "text", "no data", x=width / 2, y=height / 2, class_="empty", text_anchor="middle")
    return _markup(svg)


def _axes(
    svg: ET.Element,
    frame: _Frame,
    x_ticks: Sequence[float],
    y_ticks: Sequence[float],
    x_label: str,
    y_label: str,
    y_format: str = "{:g}",
) -> None:
    axes = _sub(svg, "g", class_="axes")
    for y in y_ticks:
        sy = frame.sy(y)
        _sub(axes, "line", x1=LEFT, x2=frame.width - RIGHT, y1=sy, y2=sy, class_="grid")
        _sub(axes, "text", y_format.format(y), x=LEFT - 4, y=sy + 3, text_anchor="end", class_="tick")
    base = frame.height - BOTTOM
    for x in x_ticks:
        _sub(axes, "text", _fmt(x), x=frame.sx(x), y=base + 12, text_anchor="middle", class_="tick")
    _sub(axes, "line", x1=LEFT, x2=frame.width - RIGHT, y1=base, y2=base, class_="axis")
    if x_label:
        _sub(
            axes,
            "text",
            x_label,
            x=(LEFT + frame.width - RIGHT) / 2,
            y=frame.height - 3,
            text_anchor="middle",
            class_="label",
        )
    if y_label:
        _sub(
            axes,
            "text",
            y_label,
            x=10,
            y=TOP + (base - TOP) / 2,
            text_anchor="middle",
            class_="label",
            transform=f"rotate(-90 10 {_fmt(TOP + (base - TOP) / 2)})",
        )


def histogram(
    counts: Sequence[int],
    edges: Sequence[float],
    *,
    title: str,
    x_label: str = "score",
    width: int = 560,
    height: int = 220,
) -> Markup:
    """Bars for `counts[i]` values in [edges[i], edges[i+1]); `len(edges) == len(counts) + 1`."""
    if len(edges) != len(counts) + 1:
        raise ValueError(f"histogram needs len(edges) == len(counts) + 1, got {len(edges)} and {len(counts)}")
    if not counts or sum(counts) == 0:
        return _empty(width, height, title, "histogram")
    top = max(counts)
    frame = _Frame(width, height, edges[0], edges[-1], 0, top)
    svg = _svg(width, height, title, "histogram")
    y_ticks = [t for t in nice_ticks(0, top, 4) if t == int(t)]
    _axes(svg, frame, nice_ticks(edges[0], edges[-1], 6), y_ticks, x_label, "rollouts")
    bars = _sub(svg, "g", class_="bars")
    for count, lo, hi in zip(counts, edges, edges[1:], strict=False):
        x, y = frame.sx(lo) + 1, frame.sy(count)
        rect = _sub(
            bars,
            "rect",
            x=x,
            y=y,
            width=max(frame.sx(hi) - frame.sx(lo) - 2, 1),
            height=frame.sy(0) - y,
            class_="bar",
            data_count=count,
            data_lo=_fmt(lo),
            data_hi=_fmt(hi),
        )
        _sub(rect, "title", f"{_fmt(lo)}–{_fmt(hi)}: {count}")
    return _markup(svg)


def _x_range(series: Sequence[Series]) -> tuple[float, float, bool]:
    """The x span padded so edge points and whiskers stay clear of the axes, and whether x is integral."""
    xs = [p.x for s in series for p in s.points]
    lo, hi = min(xs), max(xs)
    integral = all(float(x).is_integer() for x in xs)
    pad = max((hi - lo) * 0.03, 0.5 if integral or lo == hi else 0.0)
    return lo - pad, hi + pad, integral


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str = "",
    y_label: str = "",
    y_range: tuple[float, float] | None = (0.0, 1.0),
    band: bool = True,
    width: int = 560,
    height: int = 220,
) -> Markup:
    """One polyline per series; points with `lo`/`hi` get a whisker and, with `band`, the series a shaded band.

    A band suits a continuous curve (training steps); between separate runs use whiskers alone.
    """
    series = [s for s in series if s.points]
    if not series:
        return _empty(width, height, title, "line-chart")
    if y_range is None:
        ys = [v for s in series for p in s.points for v in (p.y, p.lo, p.hi) if v is not None]
        y_range = (min(0.0, min(ys)), max(ys) if max(ys) > min(0.0, min(ys)) else 1.0)
    x0, x1, integral = _x_range(series)
    frame = _Frame(width, height, x0, x1, *y_range)
    svg = _svg(width, height, title, "line-chart")
    x_ticks = [t for t in nice_ticks(x0, x1, 6) if x0 <= t <= x1 and (not integral or float(t).is_integer())]
    _axes(svg, frame, x_ticks, nice_ticks(*y_range, 5), x_label, y_label)
    for index, s in enumerate(series):
        _draw_series(svg, frame, s, index, band)
    if len(series) > 1:
        _legend(svg, width, series)
    return _markup(svg)


def _draw_series(svg: ET.Element, frame: _Frame, s: Series, index: int, band: bool) -> None:
    group = _sub(svg, "g", class_=f"series s{index} {s.css}".rstrip(), data_series=s.name)
    pts = sorted(s.points, key=lambda p: p.x)
    banded = [p for p in pts if p.lo is not None and p.hi is not None]
    if band and len(banded) > 1:
        upper = [f"{_fmt(frame.sx(p.x))},{_fmt(frame.sy(p.hi))}" for p in banded]  # type: ignore[arg-type]
        lower = [f"{_fmt(frame.sx(p.x))},{_fmt(frame.sy(p.lo))}" for p in reversed(banded)]  # type: ignore[arg-type]
        _sub(group, "polygon", points=" ".join(upper + lower), class_="band")
    if len(pts) > 1:
        coords = " ".join(f"{_fmt(frame.sx(p.x))},{_fmt(frame.sy(p.y))}" for p in pts)
        _sub(group, "polyline", points=coords, class_="line")
    if len(pts) > MAX_DOTS:  # a long training curve: the line alone reads better than a carpet of dots
        return
    for p in pts:
        cx = frame.sx(p.x)
        attrs = {"data_x": _fmt(p.x), "data_y": f"{p.y:.4f}"}
        if p.lo is not None and p.hi is not None and len(pts) <= MAX_WHISKERS:
            _sub(group, "line", x1=cx, x2=cx, y1=frame.sy(p.lo), y2=frame.sy(p.hi), class_="whisker")
        if p.lo is not None and p.hi is not None:
            attrs |= {"data_lo": f"{p.lo:.4f}", "data_hi": f"{p.hi:.4f}"}
        dot = _sub(group, "circle", cx=cx, cy=frame.sy(p.y), r=3, class_="point", **attrs)
        interval = f" [{p.lo:.2f}, {p.hi:.2f}]" if p.lo is not None and p.hi is not None else ""
        _sub(dot, "title", f"{p.label or s.name} x={_fmt(p.x)}: {p.y:.3f}{interval}")


def _legend(svg: ET.Element, width: int, series: Sequence[Series]) -> None:
    legend = _sub(svg, "g", class_="legend")
    x = width - RIGHT - 120
    for index, s in enumerate(series):
        y = TOP + 4 + index * 13
        _sub(legend, "rect", x=x, y=y - 7, width=10, height=8, class_=f"swatch s{index} {s.css}".rstrip())
        _sub(legend, "text", s.name, x=x + 14, y=y, class_="tick")


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    x_max: float = 1.0,
    percent: bool = True,
    width: int = 900,
    label_width: int = 260,
    row: int = 18,
) -> Markup:
    """Horizontal bars, one row each, labelled on the left (long labels are cut, the tooltip keeps them)."""
    if not bars:
        return _empty(width, 60, title, "bar-chart")
    height = TOP + row * len(bars) + 8
    svg = _svg(width, height, title, "bar-chart")
    scale = (width - label_width - RIGHT - 48) / (x_max or 1.0)
    for index, bar in enumerate(bars):
        y = TOP + index * row
        group = _sub(svg, "g", class_="bar-row", data_label=bar.label, data_value=f"{bar.value:.4f}")
        text = bar.label if len(bar.label) <= 40 else bar.label[:39] + "…"
        holder = _sub(group, "a", href=bar.href) if bar.href else group
        _sub(holder, "text", text, x=label_width - 6, y=y + row * 0.65, text_anchor="end", class_="bar-label")
        _sub(
            group,
            "rect",
            x=label_width,
            y=y + 2,
            width=max(bar.value, 0) * scale,
            height=row - 5,
            class_="bar",
        )
        shown = f"{bar.value:.0%}" if percent else _fmt(bar.value)
        _sub(
            group,
            "text",
            f"{shown} {bar.note}".strip(),
            x=label_width + max(bar.value, 0) * scale + 4,
            y=y + row * 0.65,
            class_="tick",
        )
        _sub(group, "title", f"{bar.label}: {shown} {bar.note}".strip())
    return _markup(svg)


STYLESHEET = Path(__file__).parent / "static" / "style.css"


def standalone(chart: Markup) -> str:
    """A chart as an .svg file of its own: the dashboard stylesheet's colours and chart rules inlined,
    so it draws the same in a README or an image viewer as on the page."""
    css = STYLESHEET.read_text()
    root = re.search(r":root\s*\{[^}]*\}", css)
    rules = [line for line in css.splitlines() if line.startswith("svg.chart")]
    style = "\n".join([root.group(0).replace(":root", "svg.chart") if root else "", *rules])
    svg = ET.fromstring(str(chart))
    svg.insert(0, ET.Element("style"))
    svg[0].text = style + "\nsvg.chart { background: #fff; font-family: sans-serif; }"
    ET.register_namespace("", "http://www.w3.org/2000/svg")
    return ET.tostring(svg, encoding="unicode", xml_declaration=True) + "\n"
