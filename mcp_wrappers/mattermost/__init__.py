"""Chat for the agent: an MCP server over the Mattermost REST API v4, and the API client it shares
with the seed loader (mcp_wrappers.chatserver.seed) and the grader's snapshot CLI."""
