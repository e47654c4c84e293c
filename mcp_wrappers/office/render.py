"""Compact text for the model: a sheet as a grid with row numbers and column letters, a document as
markdown-like text. No UNO here."""

from __future__ import annotations

from typing import Any

from mcp_wrappers.office.cells import column_name, parse_cell, parse_range

MAX_CELL_CHARS = 120
BODY_STYLES = {"standard", "default paragraph style", "text body", "body text", "normal", "default"}


def _clip(text: str) -> str:
    text = text.replace("\n", "\\n").replace("|", "\\|")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def cell_text(cell: dict[str, Any]) -> str:
    """What a cell shows; a formula also shows its source: '=SUM(B2:B3) → 10'."""
    if cell["formula"]:
        return _clip(f"{cell['formula']} → {cell['text']}")
    return _clip(cell["text"])


def sheet_grid(
    sheet: str, cells: dict[str, dict[str, Any]], shown: str | None, used: str | None, truncated: bool = False
) -> str:
    """A markdown table of the non-empty rows in `shown`, headed by what the sheet holds."""
    if shown is None:
        return f"Sheet '{sheet}' is empty."
    c1, _, c2, _ = parse_range(shown)
    head = f"Sheet '{sheet}', range {shown} (used range {used or 'empty'})"
    if truncated:
        head += " — truncated: pass a smaller range to read the rest"
    if not cells:
        return head + "\n(no values in this range)"
    rows: dict[int, dict[int, str]] = {}
    for address, cell in cells.items():
        col, row = parse_cell(address)
        rows.setdefault(row, {})[col] = cell_text(cell)
    columns = range(c1, c2 + 1)
    lines = [
        head,
        "| row | " + " | ".join(column_name(c) for c in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for row in sorted(rows):
        lines.append(f"| {row + 1} | " + " | ".join(rows[row].get(c, "") for c in columns) + " |")
    return "\n".join(lines)


def document_text(name: str, content: dict[str, Any]) -> str:
    """Headings as '#', other non-body styles as '[Style]', tables as markdown, in document order."""
    lines = [f"Document {name}: {len(content['paragraphs'])} paragraphs, {len(content['tables'])} tables", ""]
    for kind, index in content["order"]:
        if kind == "t":
            lines.append(f"[Table {index + 1}]")
            lines.extend("| " + " | ".join(_clip(c) for c in row) + " |" for row in content["tables"][index])
            continue
        para = content["paragraphs"][index]
        if not para["text"].strip():
            continue
        if para["level"]:
            lines.append("#" * para["level"] + " " + para["text"])
        elif para["style"].lower() in BODY_STYLES:
            lines.append(para["text"])
        else:
            lines.append(f"[{para['style']}] {para['text']}")
    return "\n".join(lines)


def file_list(rows: list[dict[str, Any]], folder: str) -> str:
    if not rows:
        return f"No files in {folder or '/workspace'}."
    lines = [f"{len(rows)} files in {folder or '/workspace'} (path, kind, bytes, modified):"]
    lines.extend(f"{r['path']}  {r['kind']}  {r['bytes']}  {r['modified']}" for r in rows)
    return "\n".join(lines)
