"""How numbers, times and durations look on the pages (Jinja filters)."""

from __future__ import annotations

import datetime as dt
import json

DASH = "—"


def pct(value: float | None, digits: int = 1) -> str:
    """0.625 -> '62.5%'; None -> '—'."""
    return DASH if value is None else f"{value * 100:.{digits}f}%"


def num(value: float | None, digits: int = 3) -> str:
    """A plain number with fixed digits; None -> '—'."""
    return DASH if value is None else f"{value:.{digits}f}"


def points(value: float | None) -> str:
    """Rubric points the way Grade prints them: 120.0 -> '120', 12.5 -> '12.5'."""
    if value is None:
        return DASH
    return str(int(value)) if value == int(value) else f"{value:g}"


def score(earned: float | None, possible: int | None) -> str:
    """'120/183', like str(Grade)."""
    return DASH if earned is None or possible is None else f"{points(earned)}/{possible}"


def duration(seconds: float | None) -> str:
    """0.42 -> '0.42 s', 75 -> '1 min 15 s', 3720 -> '1 h 2 min'."""
    if seconds is None:
        return DASH
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def when(value: dt.datetime | None) -> str:
    """Store times are naive UTC."""
    return DASH if value is None else f"{value:%Y-%m-%d %H:%M} UTC"


def pretty_json(text: str) -> str:
    """Tool-call arguments are the model's raw JSON text: indent it when it parses, else show it as is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, TypeError):
        return text


def arguments(text: str) -> str:
    """Tool-call arguments for reading: one `key: value` per line, multi-line strings kept multi-line.

    A bash command or SQL query inside JSON is one long line of `\\n` escapes;
    this shows it as the model meant it. Arguments that are not a JSON object
    fall back to `pretty_json` (malformed text is shown as written).
    """
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text
    if not isinstance(value, dict):
        return pretty_json(text)
    lines = []
    for key, item in value.items():
        if isinstance(item, str) and "\n" in item:
            lines.append(f"{key}:\n" + "\n".join("  " + line for line in item.split("\n")))
        elif isinstance(item, str):
            lines.append(f"{key}: {item}")
        else:
            compact = json.dumps(item, ensure_ascii=False)
            lines.append(
                f"{key}: {compact if len(compact) <= 80 else json.dumps(item, ensure_ascii=False, indent=2)}"
            )
    return "\n".join(lines)


def is_long(text: str | None, chars: int = 600, lines: int = 12) -> bool:
    """Whether a text block is folded into <details> by default."""
    return bool(text) and (len(text) > chars or text.count("\n") >= lines)


def first_line(text: str | None, width: int = 100) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: width - 1] + "…"


FILTERS = {
    "pct": pct,
    "num": num,
    "points": points,
    "duration": duration,
    "when": when,
    "pretty_json": pretty_json,
    "arguments": arguments,
    "first_line": first_line,
}
