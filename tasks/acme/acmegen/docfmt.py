"""Writers for .docx/.odt/.xlsx/.ods that produce the same bytes on every run.

Documents are described as simple blocks: ("h1"|"h2"|"p"|"bullet", text) or ("table", rows).
Spreadsheets as {sheet: rows}, a cell being a value or a formula string starting with "=".
Office files are zip archives stamped with the current time; `normalize_zip`
rewrites them with a fixed timestamp so regeneration is byte-identical.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

FIXED = (2025, 1, 2, 9, 0, 0)
FIXED_ISO = "2025-01-02T09:00:00Z"
_STAMP = re.compile(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)")

Block = tuple[str, object]


def normalize_zip(data: bytes) -> bytes:
    """Same entries, same order, fixed dates (ODF's mimetype stays first and stored)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename.endswith("core.xml"):
                body = _STAMP.sub(rb"\g<1>" + FIXED_ISO.encode() + rb"\g<3>", body)
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED)
            fixed.compress_type = info.compress_type
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, body)
    return out.getvalue()


def _save(path: Path, writer) -> None:
    buf = io.BytesIO()
    writer(buf)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(normalize_zip(buf.getvalue()))


# -- text documents -----------------------------------------------------------


def write_docx(path: Path, title: str, blocks: list[Block]) -> None:
    import datetime as dt

    from docx import Document

    doc = Document()
    props = doc.core_properties
    props.author, props.title, props.revision = "Acme Analytics", title, 1
    props.created = props.modified = props.last_printed = dt.datetime(2025, 1, 2, 9, 0, 0)
    props.last_modified_by = "Acme Analytics"
    doc.add_heading(title, level=0)
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            doc.add_heading(str(content), level=int(kind[1]))
        elif kind == "p":
            doc.add_paragraph(str(content))
        elif kind == "bullet":
            doc.add_paragraph(str(content), style="List Bullet")
        elif kind == "table":
            rows = list(content)  # type: ignore[arg-type]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = str(value)
        else:
            raise ValueError(f"unknown block {kind}")
    _save(path, doc.save)


def write_odt(path: Path, title: str, blocks: list[Block]) -> None:
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, List, ListItem, P

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text=title))
    for kind, content in blocks:
        if kind in ("h1", "h2"):
            doc.text.addElement(H(outlinelevel=int(kind[1]) + 1, text=str(content)))
        elif kind == "p":
            doc.text.addElement(P(text=str(content)))
        elif kind == "bullet":
            items = List()
            item = ListItem()
            item.addElement(P(text=str(content)))
            items.addElement(item)
            doc.text.addElement(items)
        elif kind == "table":
            rows = list(content)  # type: ignore[arg-type]
            table = Table(name=f"Table{len(doc.text.childNodes)}")
            table.addElement(TableColumn(numbercolumnsrepeated=len(rows[0])))
            for row in rows:
                tr = TableRow()
                for value in row:
                    cell = TableCell(valuetype="string")
                    cell.addElement(P(text=str(value)))
                    tr.addElement(cell)
                table.addElement(tr)
            doc.text.addElement(table)
        else:
            raise ValueError(f"unknown block {kind}")
    _save(path, doc.write)


# -- spreadsheets -------------------------------------------------------------

Sheets = dict[str, list[list[object]]]


def write_xlsx(path: Path, sheets: Sheets, widths: dict[str, list[int]] | None = None) -> None:
    import datetime as dt

    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    wb.properties.creator = "Acme Analytics"
    wb.properties.created = dt.datetime(2025, 1, 2, 9, 0, 0)
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(list(row))
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for i, width in enumerate((widths or {}).get(name, []), 1):
            ws.column_dimensions[chr(64 + i)].width = width
    _save(path, wb.save)


def write_ods(
    path: Path, sheets: Sheets, values: dict[str, dict[tuple[int, int], float]] | None = None
) -> None:
    """`values` holds the computed result of formula cells (ODF stores it next to the formula)."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    for name, rows in sheets.items():
        table = Table(name=name)
        for r, row in enumerate(rows):
            tr = TableRow()
            for c, value in enumerate(row):
                tr.addElement(_ods_cell(value, (values or {}).get(name, {}).get((r, c)), TableCell, P))
            table.addElement(tr)
        doc.spreadsheet.addElement(table)
    _save(path, doc.write)


def _ods_cell(value, computed, TableCell, P):
    if value is None or value == "":
        return TableCell()
    if isinstance(value, str) and value.startswith("="):
        cell = TableCell(formula="of:" + _odf_formula(value), valuetype="float", value=computed or 0)
        cell.addElement(P(text=f"{computed or 0:g}"))
        return cell
    if isinstance(value, int | float) and not isinstance(value, bool):
        cell = TableCell(valuetype="float", value=value)
        cell.addElement(P(text=f"{value:g}"))
        return cell
    cell = TableCell(valuetype="string")
    cell.addElement(P(text=str(value)))
    return cell


def _odf_formula(excel: str) -> str:
    """=SUM(B2:B5)/C2 -> =SUM([.B2:.B5])/[.C2] (OpenFormula cell references)."""
    ref = r"\$?[A-Z]{1,2}\$?[0-9]+"
    text = re.sub(rf"({ref}):({ref})", r"[.\1:.\2]", excel)
    return re.sub(rf"(?<![.\[A-Z])({ref})(?![\]0-9])", r"[.\1]", text)
