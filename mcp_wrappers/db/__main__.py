"""`python3 -m mcp_wrappers.db`: the database MCP server on stdio."""

from mcp_wrappers.db.server import main

main()
