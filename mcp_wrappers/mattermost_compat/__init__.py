"""A Mattermost-compatible chat service (API v4 subset) backed by PostgreSQL.

Real Mattermost cannot be installed where this project is built, so the rollout
image runs this service by default: `python3 -m mcp_wrappers.mattermost_compat` as OS
user `chat`, on 127.0.0.1:8065, storing its data in the database `chat`. It
serves the endpoints the MCP wrapper, the chat loader and the grader snapshot
use, with Mattermost's ids, millisecond timestamps, error bodies, status codes
and permission rules. Pointing the wrapper at a real Mattermost is a URL and a
token (see docs/chat.md and images/mattermost/).
"""
