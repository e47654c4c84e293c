"""Workspace paths and file formats. No UNO here, so it is importable (and testable) anywhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


class OfficeError(Exception):
    """A failure the model can act on; the message is shown to it as a tool error."""


def workspace() -> Path:
    return Path(os.environ.get("EGYM_WORKSPACE", "/workspace"))


@dataclass(frozen=True)
class Format:
    kind: str  # "spreadsheet" | "text" | "pdf"
    filters: dict[str, str]  # document kind -> LibreOffice export filter
    options: str = ""  # FilterOptions (CSV: separator, quote, UTF-8, first line)


_CSV_OPTIONS = "44,34,76,1"
FORMATS: dict[str, Format] = {
    "xlsx": Format("spreadsheet", {"spreadsheet": "Calc MS Excel 2007 XML"}),
    "ods": Format("spreadsheet", {"spreadsheet": "calc8"}),
    "csv": Format("spreadsheet", {"spreadsheet": "Text - txt - csv (StarCalc)"}, _CSV_OPTIONS),
    "docx": Format("text", {"text": "MS Word 2007 XML"}),
    "odt": Format("text", {"text": "writer8"}),
    "pdf": Format("pdf", {"spreadsheet": "calc_pdf_Export", "text": "writer_pdf_Export"}),
}
EDITABLE = [ext for ext, f in FORMATS.items() if f.kind != "pdf"]


def extension(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def format_of(path: Path, *, editable: bool = True) -> Format:
    """The format implied by a file name; an error lists the supported ones."""
    ext = extension(path)
    allowed = EDITABLE if editable else list(FORMATS)
    if ext not in allowed:
        raise OfficeError(
            f"unsupported file type '.{ext}' for {path.name}: use one of "
            + ", ".join(f".{e}" for e in allowed)
        )
    return FORMATS[ext]


def display(path: Path) -> str:
    """A path as the model should write it: relative to the workspace when inside it."""
    try:
        return path.relative_to(workspace()).as_posix()
    except ValueError:
        return str(path)


def resolve(path: str) -> Path:
    """A user path (relative to /workspace or absolute) confined to the workspace, symlinks resolved."""
    root = workspace().resolve()
    if not path or not path.strip():
        raise OfficeError("empty path: give a file name relative to /workspace, e.g. 'report.docx'")
    raw = Path(path.strip())
    full = (raw if raw.is_absolute() else root / raw).resolve()
    if full != root and root not in full.parents:
        raise OfficeError(f"path '{path}' is outside {root}: office tools only work on files in {root}")
    return full


def existing(path: str) -> Path:
    full = resolve(path)
    if not full.is_file():
        hint = "; a folder, not a file" if full.is_dir() else "; use list_files to see what exists"
        raise OfficeError(f"no such file: {display(full)}{hint}")
    return full


def list_files(folder: str = "", *, max_entries: int = 500) -> list[dict[str, object]]:
    """Files under a workspace folder (recursive, hidden files skipped), sorted by path."""
    base = resolve(folder) if folder else workspace().resolve()
    if not base.is_dir():
        raise OfficeError(f"no such folder: {display(base)}")
    rows: list[dict[str, object]] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or len(rows) >= max_entries:
                continue
            full = Path(dirpath) / name
            stat = full.stat()
            ext = extension(full)
            rows.append(
                {
                    "path": display(full),
                    "bytes": stat.st_size,
                    "modified": datetime.fromtimestamp(stat.st_mtime).isoformat(timespec="seconds"),
                    "kind": FORMATS[ext].kind if ext in FORMATS else "other",
                }
            )
    return rows
