"""`python3 -m mcp_wrappers.mail`: the mail MCP server on stdio."""

from mcp_wrappers.mail.server import main

main()
