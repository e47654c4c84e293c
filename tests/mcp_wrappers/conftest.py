"""Chat fixtures: a real container with PostgreSQL and the chat service, loaded with data/chat_*.yaml.

One container per test module (module scope) keeps the chat tests fast; tests that
change chat state use names no other test of the module relies on.
"""

from __future__ import annotations

import pytest

from tests.mcp_wrappers.chat_support import chat_overlay, chat_snapshot


@pytest.fixture(scope="module")
def chat_sandbox(docker_image):
    """A loaded chat container shared by the tests of one module."""
    from gym.sandbox import DockerSandbox

    sandbox = DockerSandbox.start(
        docker_image, apps=("db", "chat"), overlay=chat_overlay(), run_id="pytest-chat"
    )
    yield sandbox
    sandbox.close()


@pytest.fixture
def chat_state(chat_sandbox):
    """Call it for a fresh snapshot of the chat state."""
    return lambda: chat_snapshot(chat_sandbox)


# -- office_ and db_ fixtures: one container per test module, MCP sessions driven synchronously ----------


class _SyncMcp:
    """A live MCP session (gym.mcp_client) run on a private event-loop thread, called from sync tests.

    The session's task group must exit in the task that entered it, so the whole
    `async with` lives in the portal's loop (anyio's BlockingPortal does exactly that).
    """

    def __init__(self, sandbox, name: str, env: dict[str, str] | None = None):
        from anyio.from_thread import start_blocking_portal

        from gym.mcp_client import McpServerConnection

        self._portal_cm = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._session_cm = self.portal.wrap_async_context_manager(McpServerConnection(sandbox, name, env=env))
        try:
            self.connection = self._session_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    def list_tools(self):
        return self.portal.call(self.connection.list_tools)

    def call(self, tool: str, arguments: dict):
        return self.portal.call(self.connection.call_tool, tool, arguments)

    def close(self) -> None:
        try:
            self._session_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def office_sandbox(docker_image):
    """A container whose /workspace holds budget.xlsx and report.docx written by openpyxl / python-docx."""
    from gym.sandbox import DockerSandbox
    from gym.sandbox.overlay import overlay_tar

    files = {
        "workspace/budget.xlsx": _office_seed_xlsx(),
        "workspace/report.docx": _office_seed_docx(),
        "workspace/data/readme.txt": b"not an office file\n",
    }
    sandbox = DockerSandbox.start(docker_image, overlay=overlay_tar(extra=files), run_id="pytest-office")
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def office_mcp(office_sandbox):
    """The office MCP server as `agent` (one LibreOffice for the whole module)."""
    session = _SyncMcp(office_sandbox, "office")
    yield session
    session.close()


def _sessions(default: str):
    """Open extra MCP sessions (e.g. with other env) in a test; all closed after it."""
    sessions: list[_SyncMcp] = []

    def connect(sandbox, name: str = default, env: dict[str, str] | None = None) -> _SyncMcp:
        sessions.append(_SyncMcp(sandbox, name, env))
        return sessions[-1]

    yield connect
    for session in sessions:
        session.close()


@pytest.fixture
def office_connect():
    yield from _sessions("office")


@pytest.fixture
def db_connect():
    yield from _sessions("db")


def _office_seed_xlsx() -> bytes:
    """A workbook as another program writes it: the formula has no cached result, so LibreOffice must compute it."""
    import io

    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Costs"
    for row in (["Item", "Cost"], ["Pens", 10], ["Paper", 20], ["Ink", 30], ["Total", "=SUM(B2:B4)"]):
        sheet.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _office_seed_docx() -> bytes:
    import io

    from docx import Document

    doc = Document()
    doc.add_heading("Quarterly report", level=1)
    doc.add_paragraph("This draft covers the first quarter.")
    doc.add_heading("Numbers", level=2)
    table = doc.add_table(rows=2, cols=2)
    for i, row in enumerate((["Region", "Sales"], ["North", "120"])):
        for j, text in enumerate(row):
            table.cell(i, j).text = text
    doc.add_paragraph("End of draft.")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


DB_INITIAL_SQL = """
CREATE TABLE employees (id int PRIMARY KEY, name text NOT NULL, dept text, hired date);
COMMENT ON TABLE employees IS 'Everyone on the payroll';
INSERT INTO employees VALUES (1, 'Ann Lee', 'Sales', '2021-03-01'), (2, 'Bob Diaz', 'Finance', '2019-07-15'),
  (3, 'Cy Park', 'Sales', '2023-01-09');
CREATE TABLE salaries (employee_id int PRIMARY KEY REFERENCES employees(id), amount numeric(10, 2) NOT NULL);
INSERT INTO salaries VALUES (1, 81000.00), (2, 92500.50), (3, 64000.00);
GRANT SELECT, UPDATE ON employees TO agent;
CREATE SCHEMA scratch AUTHORIZATION agent;
"""


@pytest.fixture(scope="module")
def db_sandbox(docker_image):
    """A container whose company database has employees (agent: SELECT, UPDATE) and salaries (no grant)."""
    from gym.sandbox import DockerSandbox
    from gym.sandbox.overlay import overlay_tar

    overlay = overlay_tar(extra={"sql/001-db-test.sql": DB_INITIAL_SQL.encode()})
    sandbox = DockerSandbox.start(docker_image, overlay=overlay, run_id="pytest-db")
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def db_mcp(db_sandbox):
    session = _SyncMcp(db_sandbox, "db")
    yield session
    session.close()
