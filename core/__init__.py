"""The vocabulary every layer shares: errors, the trajectory record, config validation, plugins.

It imports nothing from the rest of the project, so `mcp_wrappers`, `grader`,
`gym` and `trainer` can all depend on it (see docs/architecture.md).
"""
