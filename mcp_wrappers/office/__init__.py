"""Office MCP server: spreadsheets and text documents in /workspace, through a headless LibreOffice.

Layers (each its own module):
  files.py     workspace paths and file formats (no UNO)
  cells.py     A1-style addresses (no UNO)
  bridge.py    start/connect/restart LibreOffice, run calls with a timeout
  documents.py open (cached, reloaded when the file changes), create, save, export
  sheets.py    read and write spreadsheet cells and sheets
  texts.py     read and edit text documents
  render.py    compact text for the model
  server.py    the MCP tools
  read_document.py  the grader's CLI (same reading code as the tools)
"""
