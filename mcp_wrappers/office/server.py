"""The office MCP server: tools over LibreOffice for files in /workspace.

Every edit is saved to the file at once, so the file on disk always shows the
agent's work. Errors come back as tool errors with a message the model can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from mcp_wrappers.office import documents, render, sheets, texts
from mcp_wrappers.office.bridge import OfficeBridge, Session
from mcp_wrappers.office.files import OfficeError, display, existing, extension, list_files, resolve
from mcp_wrappers.toolkit import READ_ONLY, make_server, result, run_stdio, tool_errors, writes

log = logging.getLogger("egym.office")
T = TypeVar("T")
MAX_READ_CELLS = 2000
Scalar = str | int | float | bool | None
PathArg = Annotated[
    str, Field(description="File path relative to /workspace, e.g. 'budget.xlsx' or 'reports/q3.docx'")
]
SheetArg = Annotated[str | None, Field(description="Sheet name; default: the first sheet")]
AfterArg = Annotated[
    str | None,
    Field(
        description="Insert after the first paragraph containing this text; default: at the end of the document"
    ),
]
INSTRUCTIONS = (
    "Spreadsheets (.xlsx, .ods, .csv) and text documents (.docx, .odt) in /workspace, edited with LibreOffice. "
    "Edits are saved to the file immediately. Cells are addressed A1-style; formulas start with '='."
)


_result = result
_tool = tool_errors(OfficeError, log)


class OfficeTools:
    """The tools; each method is one MCP tool (its docstring is the description)."""

    def __init__(self, bridge: OfficeBridge):
        self.bridge = bridge

    def _with_doc(
        self,
        path: str,
        what: str,
        fn: Callable[[documents.Doc], T],
        *,
        kind: str | None = None,
        save: bool = False,
    ) -> T:
        full = existing(path)

        def work(session: Session) -> T:
            doc = documents.open_doc(session, full, kind=kind)
            result = fn(doc)
            if save:
                documents.save(doc)
            return result

        return self.bridge.run(work, f"{what} {display(full)}")

    @_tool
    def list_files(
        self,
        folder: Annotated[str, Field(description="Sub-folder of /workspace; default: all")] = "",
    ) -> CallToolResult:
        """List the files in /workspace (recursively) with their kind: spreadsheet, text, pdf or other."""
        rows = list_files(folder)
        return _result(render.file_list(rows, folder), {"files": rows})

    @_tool
    def create_document(
        self,
        path: PathArg,
        overwrite: Annotated[
            bool, Field(description="Replace the file if it exists; default: fail instead")
        ] = False,
    ) -> str:
        """Create an empty document; its kind follows the extension: .xlsx/.ods/.csv spreadsheet,
        .docx/.odt text document. Fails if the file exists unless overwrite is true."""
        full = resolve(path)
        doc_kind = self.bridge.run(
            lambda s: documents.create(s, full, overwrite=overwrite).kind, f"creating {display(full)}"
        )
        hint = "write_cells" if doc_kind == "spreadsheet" else "insert_text or insert_table"
        return f"Created {doc_kind} {display(full)}. Add content with {hint}."

    @_tool
    def read_sheet(
        self,
        path: PathArg,
        sheet: SheetArg = None,
        range: Annotated[
            str | None, Field(description="Cells to read, e.g. 'A1:D20'; default: all used cells")
        ] = None,
    ) -> CallToolResult:
        """Read a spreadsheet's cells: shown values, and for formula cells the formula and its computed
        value ('=SUM(B2:B4) → 42'). Also lists the sheet names."""

        def read(doc: documents.Doc) -> tuple[sheets.Block, list[str]]:
            return sheets.read_block(doc, sheet, range, MAX_READ_CELLS), sheets.sheet_names(doc)

        block, names = self._with_doc(path, "reading", read, kind="spreadsheet")
        text = f"Sheets: {', '.join(names)}\n" + render.sheet_grid(
            block.sheet, block.cells, block.range, block.used_range, block.truncated
        )
        return _result(
            text,
            {
                "sheets": names,
                "sheet": block.sheet,
                "range": block.range,
                "used_range": block.used_range,
                "truncated": block.truncated,
                "cells": block.cells,
            },
        )

    @_tool
    def write_cells(
        self,
        path: PathArg,
        start_cell: Annotated[str, Field(description="Top-left cell of the block, e.g. 'A1'")],
        rows: Annotated[
            list[list[Scalar]],
            Field(
                description=(
                    'Rows of values from start_cell, e.g. [["Item", "Cost"], ["Pens", 3.5], ["Ink", 4], ["Total", "=SUM(B2:B3)"]]. '
                    "Numbers stay numbers, '=...' is a formula, '2024-03-31' a date, null clears a cell; "
                    "start with ' to keep text like '007 as text."
                )
            ),
        ],
        sheet: SheetArg = None,
    ) -> CallToolResult:
        """Write values or formulas into a block of cells; LibreOffice recalculates and the file is saved.
        The answer shows each formula written with its computed value."""

        def write(doc: documents.Doc) -> tuple[str, str, dict[str, Any]]:
            name, written = sheets.write_block(doc, sheet, start_cell, rows)
            return name, written, sheets.formula_results(doc, name, written)

        name, written, formulas = self._with_doc(
            path, "writing cells in", write, kind="spreadsheet", save=True
        )
        lines = [f"Wrote {written} in sheet '{name}' of {path} (saved)."]
        lines += [f"{addr}: {c['formula']} → {c['text']}" for addr, c in formulas.items()]
        errors = [addr for addr, c in formulas.items() if c["value"] is None]
        if errors:
            lines.append(
                "Formulas showing errors: " + ", ".join(errors) + ". Check their syntax and references."
            )
        if extension(Path(path)) == "csv" and formulas:
            lines.append("Note: a .csv file stores the computed values only, not the formulas.")
        return _result("\n".join(lines), {"sheet": name, "range": written, "formulas": formulas})

    @_tool
    def add_sheet(
        self,
        path: PathArg,
        name: Annotated[str, Field(description="New sheet name")],
        position: Annotated[int | None, Field(description="0-based index; default: last", ge=0)] = None,
    ) -> str:
        """Add an empty sheet to a spreadsheet."""
        names = self._with_doc(
            path,
            "adding a sheet to",
            lambda d: sheets.add_sheet(d, name, position),
            kind="spreadsheet",
            save=True,
        )
        note = " Note: a .csv file keeps only its first sheet." if extension(Path(path)) == "csv" else ""
        return f"Added sheet '{name}'. Sheets now: {', '.join(names)}.{note}"

    @_tool
    def rename_sheet(
        self,
        path: PathArg,
        sheet: Annotated[str, Field(description="Current sheet name")],
        new_name: Annotated[str, Field(description="New sheet name")],
    ) -> str:
        """Rename a sheet; formulas that refer to it follow the new name."""
        names = self._with_doc(
            path,
            "renaming a sheet in",
            lambda d: sheets.rename_sheet(d, sheet, new_name),
            kind="spreadsheet",
            save=True,
        )
        return f"Renamed sheet '{sheet}' to '{new_name}'. Sheets now: {', '.join(names)}."

    @_tool
    def read_document(self, path: PathArg) -> CallToolResult:
        """Read a text document (.docx/.odt): paragraphs with headings ('#' per level) and styles, and
        tables, in order. For a spreadsheet, shows every sheet."""

        def read(doc: documents.Doc) -> dict[str, Any]:
            if doc.kind == "text":
                return {"kind": "text", **texts.read_text(doc)}
            blocks = [sheets.read_block(doc, n, None, MAX_READ_CELLS) for n in sheets.sheet_names(doc)]
            return {"kind": "spreadsheet", "blocks": blocks}

        content = self._with_doc(path, "reading", read)
        name = display(existing(path))
        if content["kind"] == "text":
            structured = {k: v for k, v in content.items() if k != "order"}
            return _result(render.document_text(name, content), structured)
        blocks = content["blocks"]
        text = "\n\n".join(
            render.sheet_grid(b.sheet, b.cells, b.range, b.used_range, b.truncated) for b in blocks
        )
        return _result(
            text, {"kind": "spreadsheet", "sheets": [{"name": b.sheet, "cells": b.cells} for b in blocks]}
        )

    @_tool
    def insert_text(
        self,
        path: PathArg,
        text: Annotated[str, Field(description="Text to insert; each line becomes a paragraph")],
        style: Annotated[
            str | None,
            Field(
                description=(
                    "Paragraph style for the new paragraphs, e.g. 'Heading 1', 'Heading 2', 'Title', "
                    "'Text body'; default: the document's usual style at that place"
                )
            ),
        ] = None,
        after: AfterArg = None,
    ) -> str:
        """Insert paragraphs into a text document, at the end or after a given paragraph."""
        count = self._with_doc(
            path,
            "inserting text into",
            lambda d: texts.insert_paragraphs(d, text, style, after),
            kind="text",
            save=True,
        )
        where = f"after the paragraph containing '{after}'" if after else "at the end"
        return f"Inserted {count} paragraph(s) {where} of {path} (saved)."

    @_tool
    def replace_text(
        self,
        path: PathArg,
        search: Annotated[str, Field(description="Text to find (within a paragraph)")],
        replacement: Annotated[str, Field(description="Text to put in its place (may be empty)")],
        match_case: Annotated[
            bool, Field(description="Match upper/lower case exactly; false ignores case")
        ] = True,
        regex: Annotated[bool, Field(description="Treat search as a regular expression")] = False,
    ) -> str:
        """Replace every occurrence of a text in a document (or in all cells of a spreadsheet)."""
        count = self._with_doc(
            path,
            "replacing text in",
            lambda d: texts.replace_text(d, search, replacement, match_case=match_case, regex=regex),
            save=True,
        )
        return f"Replaced {count} occurrence(s) of '{search}' in {path} (saved)."

    @_tool
    def insert_table(
        self,
        path: PathArg,
        rows: Annotated[
            list[list[Scalar]],
            Field(
                description=(
                    'Table rows, the first one as header, e.g. [["Region", "Sales"], ["North", 120]]'
                )
            ),
        ],
        after: AfterArg = None,
    ) -> str:
        """Insert a table into a text document, at the end or after a given paragraph."""
        n_rows, n_cols = self._with_doc(
            path,
            "inserting a table into",
            lambda d: texts.insert_table(d, rows, after),
            kind="text",
            save=True,
        )
        return f"Inserted a {n_rows}x{n_cols} table into {path} (saved)."

    @_tool
    def save_document(
        self,
        path: PathArg,
        save_as: Annotated[
            str | None,
            Field(
                description=(
                    "Save a copy under this path; its extension picks the format, e.g. 'report.docx'"
                )
            ),
        ] = None,
    ) -> str:
        """Save a document. Edits are already saved as they are made; use save_as for a copy in another
        editable format (.xlsx, .ods, .csv, .docx, .odt)."""
        target = resolve(save_as) if save_as else None
        saved = self._with_doc(path, "saving", lambda d: documents.save(d, target))
        return f"Saved {display(saved)}."

    @_tool
    def export_document(
        self,
        path: PathArg,
        format: Annotated[
            Literal["xlsx", "ods", "csv", "docx", "odt", "pdf"],
            Field(description="Format of the copy; spreadsheets: xlsx ods csv pdf, text: docx odt pdf"),
        ],
        output: Annotated[
            str | None, Field(description=("Output path; default: same name with the new extension"))
        ] = None,
        sheet: Annotated[str | None, Field(description="For csv: which sheet; default: the first")] = None,
    ) -> str:
        """Export a copy of a document in another format (pdf for sharing, csv for data)."""
        source = existing(path)
        target = resolve(output) if output else source.with_suffix(f".{format}")
        if extension(target) != format:
            raise OfficeError(f"output '{output}' does not end in .{format}")
        if target == source:
            raise OfficeError(f"{path} is already a .{format} file: give another output path")

        def export(doc: documents.Doc) -> Path:
            if sheet or (format == "csv" and doc.kind == "spreadsheet"):
                doc.component.CurrentController.setActiveSheet(sheets.get_sheet(doc, sheet))
            return documents.export(doc, target)

        written = self._with_doc(path, "exporting", export)
        return f"Exported {display(source)} to {display(written)}."


# Every edit is saved to the file at once. Destructive: may overwrite what a file (or cell) held.
# Idempotent: a repeat changes nothing more (same cells, same copy; a second add/rename fails on the name).
TOOLS = {
    "list_files": READ_ONLY,
    "create_document": writes(destructive=True, idempotent=True),  # overwrite=true replaces a file
    "read_sheet": READ_ONLY,
    "write_cells": writes(destructive=True, idempotent=True),
    "add_sheet": writes(destructive=False, idempotent=True),
    "rename_sheet": writes(destructive=False, idempotent=True),
    "read_document": READ_ONLY,
    "insert_text": writes(destructive=False, idempotent=False),
    "replace_text": writes(destructive=True, idempotent=False),  # replacing 'a' with 'aa' grows each time
    "insert_table": writes(destructive=False, idempotent=False),
    "save_document": writes(destructive=True, idempotent=True),  # save_as may overwrite a file
    "export_document": writes(destructive=True, idempotent=True),  # the output file is overwritten
}


def build_server(bridge: OfficeBridge | None = None) -> MCPServer:
    bridge = bridge or OfficeBridge("office")
    return make_server("office", INSTRUCTIONS, OfficeTools(bridge), TOOLS, bridge.close)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    run_stdio(build_server())
