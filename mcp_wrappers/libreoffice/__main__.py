"""`python3 -m mcp_wrappers.libreoffice`: the office MCP server on stdio."""

from mcp_wrappers.libreoffice.server import main

main()
