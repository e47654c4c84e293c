"""The grader's document reader: `python3 -m mcp_wrappers.libreoffice.read_document PATH [PATH...]`.

Reads documents through the same code as the office MCP tools (so a formula
is checked by the value LibreOffice computes) and prints ONE JSON object that
maps each PATH, exactly as given, to one of:

  {"kind": "spreadsheet",
   "sheets": [{"name": "Sheet1",
               "cells": {"A1": {"value": 42 | 3.5 | "text" | null,
                                "formula": "=SUM(B1:B3)" | null,
                                "text": "42"}}}]}
      Only non-empty cells. `value` is the computed value for a formula cell,
      null when the cell shows an error (`text` then holds it, e.g. "#DIV/0!").
      Whole numbers are JSON integers. Dates are day numbers (`text` shows the
      date). Formulas are in Excel syntax (`=IF(A1>0,"y","n")`, `='Q 2'!B3`).

  {"kind": "text",
   "paragraphs": [{"style": "Heading 1", "level": 1 | null, "text": "..."}],
   "tables": [[["cell", "cell"], ["cell", "cell"]]]}
      Body paragraphs in order (including empty ones); `level` is the outline
      (heading) level, null for body text. Tables as rows of cell strings, in order.

  {"error": "no such file: ..."}   for a missing, unsupported or unreadable file.

Relative paths are taken from /workspace. Formats: .xlsx .ods .csv .docx .odt.
The grader runs it as OS user `grader` on copies of the files (grader/probe.py); it starts its own LibreOffice with its own profile folder and
pipe name, so an agent's LibreOffice running at the same time is untouched.
Exit status 0 whenever the JSON was printed (per-file failures are data); 2 on bad usage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp_wrappers.libreoffice import documents, sheets, texts
from mcp_wrappers.libreoffice.bridge import OfficeBridge, Session
from mcp_wrappers.libreoffice.files import OfficeError, format_of, workspace


def _read(session: Session, path: Path) -> dict[str, Any]:
    doc = documents.open_doc(session, path, read_only=True)
    if doc.kind == "spreadsheet":
        return {"kind": "spreadsheet", "sheets": sheets.read_all(doc)}
    content = texts.read_text(doc)
    return {"kind": "text", "paragraphs": content["paragraphs"], "tables": content["tables"]}


def read_paths(paths: list[str], bridge: OfficeBridge) -> dict[str, dict[str, Any]]:
    """Each path's content or error; LibreOffice starts only if some file can be read."""
    out: dict[str, dict[str, Any]] = {}
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else workspace() / raw
        try:
            format_of(path)
            if not path.is_file():
                raise OfficeError(f"no such file: {raw}")
            out[raw] = bridge.run(lambda s, p=path: _read(s, p), f"reading {raw}")
        except OfficeError as exc:
            out[raw] = {"error": str(exc)}
    return out


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__, file=sys.stderr)
        return 2
    bridge = OfficeBridge("reader")
    try:
        result = read_paths(paths, bridge)
    finally:
        bridge.close()
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
