"""Database MCP server: the company's PostgreSQL, as the agent's own role.

Layers: database.py (connection, timeouts, queries), catalog.py (tables and
their structure), errors.py (PostgreSQL errors as messages a model can act
on), render.py (compact text tables), server.py (the MCP tools).
"""
