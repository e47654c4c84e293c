"""In-container side of enterprise-gym: MCP servers and the apps they wrap."""
