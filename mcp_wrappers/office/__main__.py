"""`python3 -m mcp_wrappers.office`: the office MCP server on stdio."""

from mcp_wrappers.office.server import main

main()
