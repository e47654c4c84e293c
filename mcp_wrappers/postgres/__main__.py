"""`python3 -m mcp_wrappers.postgres`: the database MCP server on stdio."""

from mcp_wrappers.postgres.server import main

main()
