"""The grader's document reader: `python3 -m mcp_wrappers.office.read_document PATH [PATH...]`.

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

  {"error": "no such file: ..."}   for a missing, unsupported or unreadable file,
  {"error": "too large: ..."}      for one past the reader's bounds (bounds.py), and
  {"error": "too slow: ..."}       for one LibreOffice could not read in its time.

Relative paths are taken from /workspace. Formats: .xlsx .ods .csv .docx .odt.
The grader runs it as OS user `grader` on copies of the files (grader/probe.py); it starts its own LibreOffice with its own profile folder and
pipe name, so an agent's LibreOffice running at the same time is untouched.
Exit status 0 whenever the JSON was printed (per-file failures are data); 2 on bad usage.

The agent made these documents, so reading them is bounded: each is checked before
LibreOffice opens it and bounded while read (bounds.py); each gets at most
EGYM_OFFICE_TIMEOUT_S (60) seconds, and all of them together EGYM_READER_BUDGET_S
(set by the grader below its exec's time limit), so the reader answers before the
grader gives up on it. LibreOffice runs in a process group of its own: whenever the
reader ends (a document's time is up, SIGTERM from the exec's `timeout`) it kills that
group, so no LibreOffice is left computing after the reader.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from mcp_wrappers.office import bounds, documents, sheets, texts
from mcp_wrappers.office.bridge import OfficeBridge, OfficeTimeout, Session
from mcp_wrappers.office.files import OfficeError, format_of, workspace

DEFAULT_BUDGET_S = 100.0
MAX_ANSWER_CHARS = 48 << 20  # all documents' JSON together, under the grader's 64 MB read


def _read(session: Session, path: Path) -> dict[str, Any]:
    doc = documents.open_doc(session, path, read_only=True)
    if doc.kind == "spreadsheet":
        return {"kind": "spreadsheet", "sheets": sheets.read_all(doc, max_cells=bounds.MAX_CELLS)}
    content = texts.read_text(doc, max_items=bounds.MAX_PARAGRAPHS, max_chars=bounds.MAX_CHARS)
    return {"kind": "text", "paragraphs": content["paragraphs"], "tables": content["tables"]}


def read_paths(
    paths: list[str], bridge: OfficeBridge, *, budget_s: float | None = None
) -> dict[str, dict[str, Any]]:
    """Each path's content or error; LibreOffice starts only if some file can be read."""
    deadline = time.monotonic() + (
        budget_s or float(os.environ.get("EGYM_READER_BUDGET_S", DEFAULT_BUDGET_S))
    )
    out: dict[str, dict[str, Any]] = {}
    size = 0
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else workspace() / raw
        try:
            format_of(path)
            if not path.is_file():
                raise OfficeError(f"no such file: {raw}")
            bounds.check(path)
            left = deadline - time.monotonic()
            if left < 1:
                raise OfficeError(f"not read: the reader's time ran out on the documents before {raw}")
            doc = bridge.run(lambda s, p=path: _read(s, p), f"reading {raw}", timeout_s=left)
            doc_size = len(json.dumps(doc))
            if size + doc_size > MAX_ANSWER_CHARS:
                raise OfficeError(
                    f"too large: reading {raw} took the answer past {MAX_ANSWER_CHARS >> 20} MB"
                )
            out[raw], size = doc, size + doc_size
        except OfficeTimeout as exc:
            out[raw] = {
                "error": f"too slow: LibreOffice did not finish reading {raw} within {exc.seconds:.0f} s"
            }
        except OfficeError as exc:
            out[raw] = {"error": str(exc)}
    return out


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__, file=sys.stderr)
        return 2
    bridge = OfficeBridge("reader")

    def stop(signum: int, _frame: Any) -> None:  # the exec's `timeout`: take LibreOffice along
        bridge.kill()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        result = read_paths(paths, bridge)
    finally:
        bridge.close()
    # ASCII: a lone surrogate LibreOffice hands back cannot make the print fail.
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
