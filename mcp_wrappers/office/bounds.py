"""How much of a document the grader's reader will take: checked before LibreOffice opens it.

An agent can leave a document bomb where the rubric reads (a 1.4 MB .xlsx holding 8
million cells; an .ods whose one row is repeated a million times). LibreOffice would
spend minutes loading it, so the reader (read_document) looks first, without
LibreOffice and in a streaming way, and answers "too large" in a second:

- any zip document (.xlsx .docx .ods .odt): its entries' declared uncompressed size
  together (zipfile stops reading an entry at its declared size, so the declaration
  cannot lie to what is parsed here);
- .xlsx: the cells its sheets hold (`<c>` elements);
- .docx: its paragraphs;
- .ods/.odt: the cells holding something, rows and columns repeats multiplied out,
  the spaces `<text:s text:c="N"/>` expands to, and (.odt) the paragraphs;
- .csv: fields (separators and line ends counted).

What LibreOffice reads afterwards is bounded again while reading (sheets.read_all,
texts.read_text: cells, paragraphs, characters), and each document has a time limit
(bridge.OfficeBridge.run): what these checks miss (a formula that computes for
minutes) ends there. No page count: it needs a layout, and the characters bound
already caps what a page count would.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from mcp_wrappers.office.files import OfficeError, extension

# Far above any document a task seeds or asks for (tens of KB, hundreds of cells).
MAX_UNPACKED_BYTES = 64 << 20
MAX_ZIP_ENTRIES = 10_000
MAX_CELLS = 1_000_000  # cells holding something, all sheets together
MAX_PARAGRAPHS = 100_000
MAX_CHARS = 16_000_000  # text read from one document
MAX_SHEETS = 1_000

_CHUNK = 1 << 16


class TooLarge(OfficeError):
    """The document holds more than the reader takes."""


def _too_large(path: Path, what: str) -> TooLarge:
    return TooLarge(f"too large: {path.name} holds {what}; the grader reads documents up to these bounds")


def check(path: Path) -> None:
    """Raise TooLarge when the document at `path` is past the bounds (before LibreOffice sees it)."""
    ext = extension(path)
    if ext == "csv":
        _check_csv(path)
        return
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: LibreOffice says what it makes of it (and the time limit holds)
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ZIP_ENTRIES:
            raise _too_large(path, f"{len(entries):,} packed files (at most {MAX_ZIP_ENTRIES:,})")
        unpacked = sum(e.file_size for e in entries)
        if unpacked > MAX_UNPACKED_BYTES:
            raise _too_large(path, f"{unpacked:,} bytes unpacked (at most {MAX_UNPACKED_BYTES >> 20} MB)")
        try:
            if ext == "xlsx":
                _check_xlsx(path, archive)
            elif ext == "docx" and "word/document.xml" in archive.namelist():
                _check_docx(path, archive.open("word/document.xml"))
            elif ext in ("ods", "odt") and "content.xml" in archive.namelist():
                _check_odf(path, archive.open("content.xml"), text=ext == "odt")
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError, zlib.error):
            return  # damaged or encrypted: LibreOffice reports it


def _check_csv(path: Path) -> None:
    fields = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            fields += chunk.count(b",") + chunk.count(b"\n")
            if fields > MAX_CELLS:
                raise _too_large(path, f"more than {MAX_CELLS:,} fields")


def _tags(stream, pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
    """Every match of `pattern` (one whole tag) in a streamed XML part, found chunk by chunk.

    A byte scan, not an XML parser: a million cells take a fraction of a second instead of
    seconds. Namespace prefixes are matched whatever they are.
    """
    carry = b""
    with stream:
        while chunk := stream.read(_CHUNK):
            buffer = carry + chunk
            cut = buffer.rfind(b"<")  # a tag may straddle the chunk's end: keep it for the next round
            cut = len(buffer) if cut < 0 or len(buffer) - cut > _CHUNK else cut
            yield from pattern.finditer(buffer, 0, cut)
            carry = buffer[cut:]
        yield from pattern.finditer(carry)


_XLSX_CELL = re.compile(rb"<(?:[\w.-]+:)?c[\s/>]")
_DOCX_PARAGRAPH = re.compile(rb"<(?:[\w.-]+:)?p[\s/>]")
# Attribute values are quoted and may hold a ">": the tag ends at the first ">" outside quotes.
_ODF_TAG = re.compile(
    rb"<(/?)(?:[\w.-]+:)?(table-row|table-cell|covered-table-cell|s|p|h)(?=[\s/>])"
    rb"((?:[^<>\"']|\"[^<\"]*\"|'[^<']*')*?)(/?)>"  # no "<" inside a tag: each try stops at the next
)
_ODF_NUMBER = {
    name: re.compile(rb"(?:[\w.-]+:)?" + name.encode() + rb'\s*=\s*["\'](\d{1,12})["\']')
    for name in ("number-rows-repeated", "number-columns-repeated", "c")
}
_VALUE_TYPE = re.compile(rb"(?:[\w.-]+:)?value-type\s*=")


def _check_xlsx(path: Path, archive: zipfile.ZipFile) -> None:
    sheets = [n for n in archive.namelist() if n.startswith("xl/worksheets/") and n.endswith(".xml")]
    if len(sheets) > MAX_SHEETS:
        raise _too_large(path, f"{len(sheets):,} sheets (at most {MAX_SHEETS:,})")
    cells = 0
    for name in sheets:
        for _ in _tags(archive.open(name), _XLSX_CELL):
            cells += 1
            if cells > MAX_CELLS:
                raise _too_large(path, f"more than {MAX_CELLS:,} cells")


def _check_docx(path: Path, stream) -> None:
    for paragraphs, _ in enumerate(_tags(stream, _DOCX_PARAGRAPH), 1):
        if paragraphs > MAX_PARAGRAPHS:
            raise _too_large(path, f"more than {MAX_PARAGRAPHS:,} paragraphs")


def _number(attributes: bytes, name: str) -> int:
    found = _ODF_NUMBER[name].search(attributes)
    return max(1, int(found.group(1))) if found else 1


def _check_odf(path: Path, stream, *, text: bool) -> None:
    """Cells holding something (repeats multiplied out) and expanded spaces, in one pass over content.xml.

    A cell holds something when it has a value type or is not empty (`<table:table-cell/>` is
    the empty one LibreOffice pads rows with, repeated to the sheet's edge).
    """
    cells = spaces = paragraphs = 0
    row_repeat = row_cells = 0
    for tag in _tags(stream, _ODF_TAG):
        closing, name, attributes, empty = tag.groups()
        if name in (b"p", b"h"):
            paragraphs += text and not closing
            if paragraphs > MAX_PARAGRAPHS:
                raise _too_large(path, f"more than {MAX_PARAGRAPHS:,} paragraphs")
        elif name == b"s":
            spaces += _number(attributes, "c")
            if spaces > MAX_CHARS:
                raise _too_large(path, f"more than {MAX_CHARS:,} characters of spaces")
        elif name == b"table-row":
            if not closing:
                row_repeat, row_cells = _number(attributes, "number-rows-repeated"), 0
            if closing or empty:
                cells += row_repeat * row_cells
                if cells > MAX_CELLS:
                    raise _too_large(path, f"more than {MAX_CELLS:,} cells")
        elif not closing and (not empty or _VALUE_TYPE.search(attributes)):
            row_cells += _number(attributes, "number-columns-repeated")
