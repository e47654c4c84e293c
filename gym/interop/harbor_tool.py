"""`egym-tool`: the workstation's app tools from a shell, for Harbor agents (installed in the task image).

    egym-tool chat --list                                  # the chat tools with their arguments
    egym-tool chat post_message '{"channel": "sales", "message": "Done."}'
    egym-tool db query '{"sql": "SELECT count(*) FROM customers"}'

An egym harness offers the MCP servers' tools as tool calls (`chat.post_message`);
a Harbor agent has a terminal, so this starts the same in-container MCP server as
the calling user (the agent), calls one tool and prints its text. Exit 1 when the
tool reports an error. The reference solution (solution/solve.sh) uses it too.
Runs with the image's interpreter (`/opt/egym/venv/bin/python3 -I`, mcp installed).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_wrappers.apps import apps

USAGE = f"usage: egym-tool {{{','.join(apps())}}} (--list | TOOL ['{{json arguments}}'])"


async def call(server: str, tool: str, arguments: dict) -> int:
    params = StdioServerParameters(
        command=sys.executable, args=["-I", "-m", apps()[server].server], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        if tool == "--list":
            for item in (await session.list_tools()).tools:
                print(f"{item.name}: {(item.description or '').strip()}")
                print(f"  arguments: {json.dumps(item.input_schema.get('properties', {}))}")
            return 0
        result = await session.call_tool(tool, arguments)
    for part in result.content:
        print(getattr(part, "text", None) or part.model_dump_json())
    return 1 if result.is_error else 0


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[0] not in apps():
        print(USAGE, file=sys.stderr)
        return 2
    try:
        arguments = json.loads(argv[2]) if len(argv) == 3 else {}
    except ValueError as exc:
        print(f"egym-tool: the arguments are not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("egym-tool: the arguments must be a JSON object", file=sys.stderr)
        return 2
    return asyncio.run(call(argv[0], argv[1], arguments))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
