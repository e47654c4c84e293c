"""Chat for the agent: an MCP server over the Mattermost REST API v4, and the API client it shares
with the chat loader (mcp_wrappers.chat.load) and the grader's snapshot CLI."""
