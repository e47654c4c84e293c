"""Open, create, save and export documents in a LibreOffice session.

Open documents are cached per session and reloaded when their file changed on
disk (the agent may also edit files with shell tools). Every edit the server
makes is saved at once (see `save`), so the file on disk is always the state
the grader reads.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_wrappers.office.bridge import Session
from mcp_wrappers.office.files import FORMATS, OfficeError, display, extension, format_of

MAX_OPEN = 8  # documents kept open per session; the least recently used is closed first
_FACTORY = {"spreadsheet": "private:factory/scalc", "text": "private:factory/swriter"}
_SERVICES = {
    "spreadsheet": "com.sun.star.sheet.SpreadsheetDocument",
    "text": "com.sun.star.text.TextDocument",
}


@dataclass
class Doc:
    path: Path
    component: Any  # the UNO document model
    kind: str  # "spreadsheet" | "text"
    stamp: tuple[int, int] | None  # (mtime_ns, size) of the file when loaded or last saved
    parser: Any = None  # a spreadsheet's Excel-syntax FormulaParser, made on first use (sheets.py)

    @property
    def name(self) -> str:
        return display(self.path)


def props(**values: Any) -> tuple[Any, ...]:
    """A UNO PropertyValue sequence (MediaDescriptor) from keyword arguments."""
    from com.sun.star.beans import PropertyValue

    out = []
    for key, value in values.items():
        prop = PropertyValue()
        prop.Name, prop.Value = key, value
        out.append(prop)
    return tuple(out)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise OfficeError(f"no such file: {display(path)}; use list_files to see what exists") from None
    return st.st_mtime_ns, st.st_size


def _close(doc: Doc) -> None:
    with contextlib.suppress(Exception):
        doc.component.close(True)


def _remember(session: Session, doc: Doc) -> Doc:
    session.docs.pop(doc.path, None)
    session.docs[doc.path] = doc  # dicts keep insertion order: last = most recently used
    while len(session.docs) > MAX_OPEN:
        _close(session.docs.pop(next(iter(session.docs))))
    return doc


def open_doc(session: Session, path: Path, *, kind: str | None = None, read_only: bool = False) -> Doc:
    """The document at `path`, loaded (or reused when unchanged on disk). `kind` rejects the other kind."""
    fmt = format_of(path)
    if kind and fmt.kind != kind:
        raise OfficeError(f"{display(path)} is a {fmt.kind}, not a {kind}: " + _tool_hint(fmt.kind))
    stamp = _stamp(path)
    cached = session.docs.get(path)
    if cached is not None and cached.stamp == stamp:
        return _remember(session, cached)
    if cached is not None:
        _close(session.docs.pop(path))
    return _remember(session, _load(session, path, stamp, read_only))


def _load(session: Session, path: Path, stamp: tuple[int, int], read_only: bool) -> Doc:
    from com.sun.star.io import IOException
    from com.sun.star.lang import IllegalArgumentException

    fmt = format_of(path)
    # Never run a document's macros or refresh its links to other files (MacroExecutionMode
    # NEVER_EXECUTE, UpdateDocMode NO_UPDATE): documents come from the agent.
    args: dict[str, Any] = {
        "Hidden": True,
        "ReadOnly": read_only,
        "MacroExecutionMode": 0,
        "UpdateDocMode": 0,
    }
    if fmt.options:  # CSV: force Calc with UTF-8 and comma separators
        args.update(FilterName=fmt.filters["spreadsheet"], FilterOptions=fmt.options)
    unreadable = f"cannot open {display(path)}: LibreOffice could not read it as a .{extension(path)} file"
    try:
        component = session.desktop.loadComponentFromURL(path.as_uri(), "_blank", 0, props(**args))
    except (IOException, IllegalArgumentException):
        raise OfficeError(unreadable) from None
    if component is None:
        raise OfficeError(unreadable)
    if not component.supportsService(_SERVICES[fmt.kind]):
        with contextlib.suppress(Exception):
            component.close(True)
        raise OfficeError(
            f"{display(path)} does not hold a {fmt.kind} although its name ends in .{extension(path)}"
        )
    if fmt.kind == "spreadsheet":
        component.calculateAll()  # files written by other tools may carry no (or stale) formula results
    return Doc(path, component, fmt.kind, stamp)


def _tool_hint(kind: str) -> str:
    return "use read_sheet/write_cells" if kind == "spreadsheet" else "use read_document/insert_text"


def create(session: Session, path: Path, *, overwrite: bool = False) -> Doc:
    """A new empty document of the kind its extension implies, saved at once."""
    fmt = format_of(path)
    if path.exists() and not overwrite:
        raise OfficeError(f"{display(path)} already exists: pick another name or pass overwrite=true")
    component = session.desktop.loadComponentFromURL(_FACTORY[fmt.kind], "_blank", 0, props(Hidden=True))
    doc = Doc(path, component, fmt.kind, None)
    if path in session.docs:
        _close(session.docs.pop(path))
    save(doc)
    return _remember(session, doc)


def save(doc: Doc, target: Path | None = None) -> Path:
    """Write the document to its own file, or to `target` in the format its extension names."""
    target = target or doc.path
    fmt = format_of(target)
    if fmt.kind != doc.kind:
        raise OfficeError(f"cannot save a {doc.kind} as .{extension(target)}: use " + _same_kind(doc.kind))
    _store(doc, target, fmt.filters[doc.kind], fmt.options)
    if target == doc.path:
        # A .csv file keeps values only: reload it next time so what is shown is what was saved.
        doc.stamp = None if fmt.options else _stamp(target)
    return target


def export(doc: Doc, target: Path) -> Path:
    """Write a copy in another format (pdf included); the open document keeps its own file."""
    fmt = format_of(target, editable=False)
    if doc.kind not in fmt.filters:
        raise OfficeError(
            f"cannot export a {doc.kind} as .{extension(target)}: use {_same_kind(doc.kind)} or .pdf"
        )
    _store(doc, target, fmt.filters[doc.kind], fmt.options)
    return target


def _same_kind(kind: str) -> str:
    return ", ".join(f".{ext}" for ext, f in FORMATS.items() if f.kind == kind)


def _store(doc: Doc, target: Path, filter_name: str, options: str) -> None:
    from com.sun.star.io import IOException
    from com.sun.star.task import ErrorCodeIOException

    args: dict[str, Any] = {"FilterName": filter_name, "Overwrite": True}
    if options:
        args["FilterOptions"] = options
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        doc.component.storeToURL(target.as_uri(), props(**args))
    except (IOException, ErrorCodeIOException, OSError) as exc:
        reason = getattr(exc, "Message", "") or getattr(exc, "strerror", "") or "write failed"
        raise OfficeError(f"cannot write {display(target)}: {reason}") from None
