"""MCP server timings: sandbox start to tools/list answered, and tool-call round trips, per server.

    .venv/bin/python bench/bench_mcp.py   -> bench/results/mcp.json

For each server (chat, office, db): RUNS fresh sandboxes; each is timed from
`DockerSandbox.start` to the server's tools/list answer (split into sandbox
ready and server ready). In the first sandbox, a representative cheap tool is
called CALLS times over one session (median round trip); for office the first
call, which starts LibreOffice, is reported separately, and so is an edit
(write_cells: change, recalculate, save). A server that is not in the image or
fails to start is reported as missing with the reason instead of aborting.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import summary, write
from gym.mcp_client import McpServerConnection
from gym.sandbox import DockerSandbox
from gym.sandbox.docker_client import default_image
from gym.sandbox.overlay import overlay_tar

RUNS = 3
CALLS = 20
SQL = """CREATE TABLE employees (id int PRIMARY KEY, name text, dept text);
INSERT INTO employees SELECT g, 'person ' || g, CASE WHEN g % 2 = 0 THEN 'Sales' ELSE 'Ops' END
FROM generate_series(1, 200) g;
GRANT SELECT, UPDATE ON employees TO agent;
"""
CSV = "item,cost\n" + "".join(f"item {i},{i * 1.5}\n" for i in range(1, 51))
CHAT = """
agent_user: dana
team: {name: acme, display_name: Acme}
users: [{username: dana}, {username: raj}]
channels: [{name: finance, members: [dana, raj]}]
posts:
""" + "".join(f'  - {{channel: finance, user: raj, message: "note {i}"}}\n' for i in range(20))


@dataclass
class Case:
    """How to start a server's sandbox and which calls to time on it."""

    apps: tuple[str, ...]
    overlay: dict[str, bytes]
    call: tuple[str, dict[str, Any]]  # the round-trip probe
    extra: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # other timed calls, once each


CASES = {
    "chat": Case(
        ("db", "chat"),
        {"chat/001-bench.yaml": CHAT.encode()},
        ("read_channel", {"channel": "finance", "limit": 5}),
    ),
    "office": Case(
        ("db",),
        {"workspace/costs.csv": CSV.encode()},
        ("read_sheet", {"path": "costs.csv", "range": "A1:B10"}),
        {
            "first_call_s": ("read_sheet", {"path": "costs.csv", "range": "A1:B10"}),
            "create_xlsx_s": ("create_document", {"path": "bench.xlsx"}),
            "write_formula_and_save_s": (
                "write_cells",
                {"path": "bench.xlsx", "start_cell": "A1", "rows": [[1], [2], ["=SUM(A1:A2)"]]},
            ),
        },
    ),
    "db": Case(
        ("db",),
        {"sql/001-bench.sql": SQL.encode()},
        ("query", {"sql": "SELECT name, dept FROM employees WHERE id = 7"}),
        {"execute_update_s": ("execute", {"sql": "UPDATE employees SET dept = 'Ops' WHERE id = 8"})},
    ),
}


async def _timed_call(conn: McpServerConnection, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    outcome = await conn.call_tool(tool, args)
    if outcome.is_error:
        raise RuntimeError(f"{tool} failed: {outcome.text[:200]}")
    return time.perf_counter() - started


async def _one_run(name: str, case: Case, first: bool, out: dict[str, Any]) -> None:
    started = time.perf_counter()
    sandbox = await asyncio.to_thread(
        DockerSandbox.start,
        default_image(),
        apps=case.apps,
        overlay=overlay_tar(extra=case.overlay),
        run_id="bench-mcp",
    )
    try:
        ready = time.perf_counter()
        async with McpServerConnection(sandbox, name) as conn:
            tools = await conn.list_tools()
            listed = time.perf_counter()
            out["start_to_tools_list_s"].append(listed - started)
            out["sandbox_ready_s"].append(ready - started)
            out["server_ready_s"].append(listed - ready)
            out["tools"] = len(tools)
            if first:
                for key, (tool, args) in case.extra.items():
                    out[key] = round(await _timed_call(conn, tool, args), 4)
                tool, args = case.call
                out["round_trip_s"] = summary([await _timed_call(conn, tool, args) for _ in range(CALLS)])
                out["round_trip_tool"] = tool
    finally:
        await asyncio.to_thread(sandbox.close)


async def measure(name: str, case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {"start_to_tools_list_s": [], "sandbox_ready_s": [], "server_ready_s": []}
    try:
        for run in range(RUNS):
            await _one_run(name, case, run == 0, out)
    except Exception as exc:  # noqa: BLE001 - a server that is not there yet is a result, not a crash
        return {"missing": True, "reason": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
    for key in ("start_to_tools_list_s", "sandbox_ready_s", "server_ready_s"):
        out[key] = summary(out[key])
    return out


def main() -> int:
    results = {name: asyncio.run(measure(name, case)) for name, case in CASES.items()}
    for name, r in results.items():
        if r.get("missing"):
            print(f"{name:7} missing: {r['reason']}")
            continue
        extra = ", ".join(f"{k} {r[k]:.2f}s" for k in CASES[name].extra)
        print(
            f"{name:7} start→tools/list {r['start_to_tools_list_s']['median']:.2f}s "
            f"(server {r['server_ready_s']['median']:.2f}s), {r['round_trip_tool']} round trip "
            f"{r['round_trip_s']['median'] * 1000:.0f} ms" + (f", {extra}" if extra else "")
        )
    write(
        "mcp",
        {
            "nproc": os.cpu_count(),
            "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
            "runs": RUNS,
            "calls": CALLS,
            "servers": results,
        },
    )
    return 0  # a missing server is reported in the JSON and the summary, not as a failed bench


if __name__ == "__main__":
    sys.exit(main())
