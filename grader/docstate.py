"""A document's content as printed by `mcp_wrappers.office.read_document`, checked before any check reads it.

The reader runs in the agent's container, so its output is validated like any
input from outside: a shape that does not match is a ProbeError, never a pass.
Checks keep reading plain dicts (`document_dict`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, TypeAdapter

from core.strict import StrictModel


class Cell(StrictModel):
    value: bool | int | float | str | None = Field(
        description="Computed value; None when the cell shows an error."
    )
    formula: str | None = None
    text: str = Field(description="The text the cell shows.")


class Sheet(StrictModel):
    name: str
    cells: dict[str, Cell] = Field(description="Non-empty cells by address (A1).")


class Spreadsheet(StrictModel):
    kind: Literal["spreadsheet"]
    sheets: list[Sheet]


class Paragraph(StrictModel):
    style: str | None = None
    level: int | None = None
    text: str


class TextDocument(StrictModel):
    kind: Literal["text"]
    paragraphs: list[Paragraph]
    tables: list[list[list[str]]]


class Unreadable(StrictModel):
    error: str


Document = Spreadsheet | TextDocument | Unreadable
_ADAPTER: TypeAdapter[Document] = TypeAdapter(Document)


def document_dict(raw: Any) -> dict[str, Any]:
    """The reader's answer for one file, validated; ValueError when it has another shape."""
    return _ADAPTER.validate_python(raw).model_dump()
