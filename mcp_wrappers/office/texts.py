"""Text documents: read paragraphs (style, heading level) and tables; insert and replace text; insert tables."""

from __future__ import annotations

import re
from typing import Any

from mcp_wrappers.office.cells import cell_name
from mcp_wrappers.office.documents import Doc
from mcp_wrappers.office.files import OfficeError

_TABLE_CELL = re.compile(r"^([A-Z]+)(\d+)")


def read_text(doc: Doc, *, max_items: int | None = None, max_chars: int | None = None) -> dict[str, Any]:
    """{"paragraphs": [{"style", "level", "text"}], "tables": [rows of cell strings], "order": [("p"|"t", index)]}.

    Only the body text: paragraphs inside tables belong to their table. OfficeError ("too large")
    past `max_items` paragraphs and table cells, or `max_chars` characters of text.
    """
    paragraphs: list[dict[str, Any]] = []
    tables: list[list[list[str]]] = []
    order: list[tuple[str, int]] = []
    items_read = chars = 0
    items = doc.component.Text.createEnumeration()
    while items.hasMoreElements():
        item = items.nextElement()
        if item.supportsService("com.sun.star.text.TextTable"):
            order.append(("t", len(tables)))
            tables.append(_table_rows(item))
            items_read += sum(len(row) for row in tables[-1])
            chars += sum(len(cell) for row in tables[-1] for cell in row)
        else:
            order.append(("p", len(paragraphs)))
            level = item.OutlineLevel
            paragraphs.append({"style": item.ParaStyleName, "level": level or None, "text": item.getString()})
            items_read += 1
            chars += len(paragraphs[-1]["text"])
        if (max_items is not None and items_read > max_items) or (
            max_chars is not None and chars > max_chars
        ):
            raise OfficeError(
                f"too large: {doc.name} holds more than {max_items:,} paragraphs and table cells"
                if max_items is not None and items_read > max_items
                else f"too large: {doc.name} holds more than {max_chars:,} characters of text"
            )
    return {"paragraphs": paragraphs, "tables": tables, "order": order}


def _table_rows(table: Any) -> list[list[str]]:
    data = _data_array(table)
    if data is not None and all(isinstance(v, str) for row in data for v in row):
        return [list(row) for row in data]
    # Merged or split cells (or numeric cells): go cell by cell, grouped by row number.
    rows: dict[int, list[tuple[str, str]]] = {}
    for name in table.getCellNames():
        match = _TABLE_CELL.match(name)
        if match:
            rows.setdefault(int(match.group(2)), []).append((name, table.getCellByName(name).getString()))
    return [[text for _, text in cells] for _, cells in sorted(rows.items())]


def _data_array(table: Any) -> Any:
    try:
        return table.getDataArray()
    except Exception:  # noqa: BLE001 - irregular tables refuse the bulk call
        return None


def _paragraph_style(doc: Doc, style: str) -> str:
    """The internal name of a paragraph style given its name or shown name, case-insensitive."""
    styles = doc.component.StyleFamilies.getByName("ParagraphStyles")
    if styles.hasByName(style):
        return style
    names: dict[str, str] = {}
    for name in styles.ElementNames:
        names[name.lower()] = name
        names[styles.getByName(name).DisplayName.lower()] = name
    if style.strip().lower() in names:
        return names[style.strip().lower()]
    common = [
        n
        for n in ("Title", "Heading 1", "Heading 2", "Heading 3", "Text body", "List Bullet")
        if n.lower() in names
    ]
    raise OfficeError(f"no paragraph style '{style}' in {doc.name}; common ones: " + ", ".join(common))


def _find_paragraph(doc: Doc, needle: str) -> Any:
    items = doc.component.Text.createEnumeration()
    while items.hasMoreElements():
        item = items.nextElement()
        if not item.supportsService("com.sun.star.text.TextTable") and needle in item.getString():
            return item
    raise OfficeError(f"no paragraph in {doc.name} contains '{needle}': use read_document to see its text")


def _anchor(doc: Doc, after: str | None) -> tuple[Any, bool]:
    """A cursor where new paragraphs go, and whether the first one needs a paragraph break before it."""
    text = doc.component.Text
    if after:
        return text.createTextCursorByRange(_find_paragraph(doc, after).getEnd()), True
    cursor = text.createTextCursorByRange(text.getEnd())
    cursor.gotoStartOfParagraph(True)
    reuse = cursor.getString() == ""  # a trailing empty paragraph (a new document has one): write into it
    cursor.collapseToEnd()
    return cursor, not reuse


def insert_paragraphs(doc: Doc, content: str, style: str | None = None, after: str | None = None) -> int:
    """Insert one paragraph per line of `content`; returns how many were inserted."""
    from com.sun.star.text.ControlCharacter import PARAGRAPH_BREAK

    style_name = _paragraph_style(doc, style) if style else None
    text = doc.component.Text
    cursor, needs_break = _anchor(doc, after)
    lines = content.split("\n")
    for index, line in enumerate(lines):
        if needs_break or index:
            text.insertControlCharacter(cursor, PARAGRAPH_BREAK, False)
        text.insertString(cursor, line, False)
        if style_name:
            cursor.ParaStyleName = style_name
    return len(lines)


def replace_text(
    doc: Doc, search: str, replacement: str, *, match_case: bool = True, regex: bool = False
) -> int:
    """Replace every occurrence (in every sheet of a spreadsheet); an absent text is an error."""
    if not search:
        raise OfficeError("search text is empty")
    sheets = doc.component.Sheets if doc.kind == "spreadsheet" else None
    targets = [sheets.getByIndex(i) for i in range(sheets.getCount())] if sheets else [doc.component]
    count = 0
    for target in targets:
        desc = target.createReplaceDescriptor()
        desc.SearchString, desc.ReplaceString = search, replacement
        desc.SearchCaseSensitive, desc.SearchRegularExpression = match_case, regex
        count += target.replaceAll(desc)
    if not count:
        raise OfficeError(f"'{search}' does not occur in {doc.name}" + ("" if match_case else " (any case)"))
    return count


def insert_table(doc: Doc, rows: list[list[Any]], after: str | None = None) -> tuple[int, int]:
    """Insert a table (first row: header) at the end or after a paragraph; returns (rows, columns)."""
    if doc.kind != "text":
        raise OfficeError(f"{doc.name} is a spreadsheet: write the rows with write_cells instead")
    width = max((len(r) for r in rows), default=0)
    if not rows or width == 0:
        raise OfficeError(
            'a table needs at least one row with one cell, e.g. [["Region", "Sales"], ["North", "120"]]'
        )
    table = doc.component.createInstance("com.sun.star.text.TextTable")
    table.initialize(len(rows), width)
    cursor, _ = _anchor(doc, after)
    doc.component.Text.insertTextContent(cursor, table, False)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table.getCellByName(cell_name(j, i)).setString("" if value is None else str(value))
    return len(rows), width
