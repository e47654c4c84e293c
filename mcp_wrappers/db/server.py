"""The database MCP server: list and describe tables, run read queries, execute statements.

It connects as the OS user's own role, so the world's grants decide what the
agent may read or change; a refused statement comes back as a tool error that
names the table and the missing privilege.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from mcp_wrappers.db import catalog
from mcp_wrappers.db.database import Database, Result
from mcp_wrappers.db.errors import DbError
from mcp_wrappers.db.render import row_summary, text_table
from mcp_wrappers.toolkit import READ_ONLY, make_server, result, run_stdio, tool_errors, writes

log = logging.getLogger("egym.db")
T = TypeVar("T")
SqlArg = Annotated[str, Field(description="SQL text (PostgreSQL dialect)")]
INSTRUCTIONS = (
    "The company's PostgreSQL database, as your own database role: its grants decide what you may read "
    "or change. Use list_tables and describe_table to learn the schema, query to read, execute to change."
)


_result = result
_tool = tool_errors(DbError, log)


def _privileges(privs: list[str]) -> str:
    return ", ".join(privs) if privs else "no access"


class DbTools:
    """The tools; each method is one MCP tool (its docstring is the description)."""

    def __init__(self, db: Database):
        self.db = db

    @_tool
    def list_tables(
        self,
        schema: Annotated[str | None, Field(description="Only this schema; default: all")] = None,
    ) -> CallToolResult:
        """List the tables and views, with what your role may do on each (SELECT, INSERT, UPDATE, DELETE)."""
        tables = catalog.list_tables(self.db, schema)
        lines = [f"{len(tables)} tables and views (you are role {self.db.role}):"]
        for t in tables:
            kind = "" if t["kind"] == "table" else f" ({t['kind']})"
            note = f" — {t['comment']}" if t["comment"] else ""
            lines.append(f"{t['name']}{kind}: {_privileges(t['privileges'])}{note}")
        return _result("\n".join(lines), {"role": self.db.role, "tables": tables})

    @_tool
    def describe_table(
        self,
        table: Annotated[str, Field(description="Table or view name, e.g. 'employees' or 'hr.salaries'")],
    ) -> CallToolResult:
        """Show a table's columns (type, nullability, default), keys, foreign keys, indexes and your privileges."""
        info = catalog.describe_table(self.db, table)
        lines = [
            f"{info['kind'].capitalize()} {info['table']} — you may: {_privileges(info['privileges'])}",
            "Columns:",
        ]
        for c in info["columns"]:
            extra = ("" if c["nullable"] else " NOT NULL") + (
                f" DEFAULT {c['default']}" if c["default"] else ""
            )
            lines.append(
                f"  {c['name']} {c['type']}{extra}" + (f"  -- {c['comment']}" if c["comment"] else "")
            )
        for title, key in (("Constraints", "constraints"), ("Indexes", "indexes")):
            if info[key]:
                lines.append(f"{title}:")
                lines += [f"  {item['name']}: {item['definition']}" for item in info[key]]
        if info["referenced_by"]:
            lines.append("Referenced by:")
            lines += [f"  {r['table']}.{r['name']}: {r['definition']}" for r in info["referenced_by"]]
        return _result("\n".join(lines), info)

    @_tool
    def query(
        self,
        sql: SqlArg,
        limit: Annotated[int, Field(description="Most rows to return", ge=1, le=1000)] = 100,
    ) -> CallToolResult:
        """Run a read-only SQL query (SELECT, WITH, EXPLAIN, SHOW) and get the rows as a table.
        Example: SELECT name, dept FROM employees WHERE active ORDER BY name"""
        result = self.db.query(sql, limit)
        if not result.columns:
            return _result(f"{result.status or 'OK'} (no rows returned)", _structured(result))
        text = (
            text_table(result.columns, result.rows)
            + "\n"
            + row_summary(len(result.rows), result.truncated, limit)
        )
        return _result(text, _structured(result))

    @_tool
    def execute(
        self,
        sql: Annotated[
            str,
            Field(
                description=(
                    "One or more SQL statements: INSERT, UPDATE, DELETE, CREATE, ALTER, ... Committed at once."
                )
            ),
        ],
    ) -> CallToolResult:
        """Execute statements that change data or schema; reports rows affected (and rows from RETURNING)."""
        results = self.db.execute(sql)
        lines = []
        for r in results:
            affected = f" ({r.rowcount} row{'' if r.rowcount == 1 else 's'} affected)"
            lines.append(r.status + (affected if r.rowcount >= 0 and not r.columns else ""))
            if r.columns:
                lines.append(text_table(r.columns, r.rows))
                lines.append(row_summary(len(r.rows), r.truncated, 100))
        return _result("\n".join(lines), {"statements": [_structured(r) for r in results]})


def _structured(result: Result) -> dict[str, Any]:
    return {
        "status": result.status,
        "rowcount": result.rowcount,
        "columns": result.columns,
        "rows": result.rows,
        "truncated": result.truncated,
    }


# query runs in a READ ONLY transaction; execute may DELETE, DROP or UPDATE, and repeating an INSERT adds rows.
TOOLS = {
    "list_tables": READ_ONLY,
    "describe_table": READ_ONLY,
    "query": READ_ONLY,
    "execute": writes(destructive=True, idempotent=False),
}


def build_server(db: Database | None = None) -> MCPServer:
    db = db or Database()
    return make_server("db", INSTRUCTIONS, DbTools(db), TOOLS, db.close)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    run_stdio(build_server())
