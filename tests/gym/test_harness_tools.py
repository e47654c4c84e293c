"""The built-in tools in a real container: persistent shell, timeouts, output caps, file tools, todo."""

from __future__ import annotations

import json
import time

import pytest

from core.trajectory import ToolCall, ToolResult
from gym.harness.config import HarnessConfig
from gym.harness.toolbox import Toolbox
from gym.sandbox import DockerSandbox
from gym.tasks import Limits, Task

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def box_sandbox(docker_image):
    sandbox = DockerSandbox.start(docker_image, run_id="pytest-harness-tools")
    yield sandbox
    sandbox.close()


def make_task(tool_timeout_s: float = 10) -> Task:
    return Task(
        id="tools",
        title="tools",
        world="w",
        prompt="p",
        apps=[],
        limits=Limits(tool_timeout_s=tool_timeout_s),
    )


def toolbox(sandbox, *, tool_timeout_s: float = 10, output_cap: int = 30_000):
    config = HarnessConfig(mcp_servers={}, output_cap_chars=output_cap)
    return Toolbox.open(sandbox, make_task(tool_timeout_s), config)


async def call(box: Toolbox, name: str, **args) -> ToolResult:
    return await box.call(ToolCall(id="c1", name=name, arguments=json.dumps(args)))


async def test_shell_keeps_cwd_and_exported_variables(box_sandbox):
    async with toolbox(box_sandbox) as box:
        first = await call(
            box, "bash", command="mkdir -p /tmp/deep/er && cd /tmp/deep/er && export GREETING=hi"
        )
        assert not first.is_error
        second = await call(box, "bash", command="pwd; echo $GREETING; cd ..; false")
        assert second.output.splitlines()[:2] == ["/tmp/deep/er", "hi"]
        assert "[exit code 1]" in second.output and not second.is_error
        third = await call(box, "bash", command="pwd; whoami")
        assert third.output.splitlines() == ["/tmp/deep", "agent"]


async def test_shell_output_is_capped_with_a_note(box_sandbox):
    async with toolbox(box_sandbox, output_cap=2000) as box:
        result = await call(box, "bash", command="seq 1 100000")
        assert result.output.startswith("1\n2\n3\n")
        assert result.output.rstrip().endswith("100000")
        assert "bytes of output cut here" in result.output
        assert len(result.output) < 3000


async def test_hanging_command_times_out_and_the_shell_carries_on(box_sandbox):
    async with toolbox(box_sandbox, tool_timeout_s=1.5) as box:
        hung = await call(box, "bash", command="export KEPT=yes; echo started; sleep 600")
        assert hung.is_error
        assert "started" in hung.output and "timed out after 1.5s" in hung.output
        after = await call(
            box, "bash", command='echo $KEPT; pgrep -u agent -f "sleep 600" || echo no-sleep-left'
        )
        assert after.output.splitlines() == ["yes", "no-sleep-left"]


async def test_a_stuck_shell_is_restarted_in_the_same_directory(box_sandbox):
    async with toolbox(box_sandbox, tool_timeout_s=1) as box:
        await call(box, "bash", command="cd /tmp && export GONE=1")
        stuck = await call(box, "bash", command="while :; do :; done")
        assert stuck.is_error and "restarted in /tmp" in stuck.output
        after = await call(box, "bash", command='pwd; echo "gone=$GONE"')
        assert after.output.splitlines() == ["/tmp", "gone="]
        exited = await call(box, "bash", command="exit 4")
        assert "restarted" in exited.output
        assert (await call(box, "bash", command="echo alive")).output == "alive"


async def test_bash_quoting_heredocs_and_stdin(box_sandbox):
    async with toolbox(box_sandbox) as box:
        script = 'cat <<\'EOF\'\nit\'s "quoted" $HOME\nEOF\nread line; echo "read:[$line]"'
        result = await call(box, "bash", command=script)
        assert result.output.splitlines() == ['it\'s "quoted" $HOME', "read:[]"]


async def test_write_read_and_edit(box_sandbox):
    async with toolbox(box_sandbox) as box:
        written = await call(
            box, "write", path="/workspace/notes/todo.txt", content="alpha\nbeta\nalpha\ngamma\n"
        )
        assert not written.is_error and "4 lines" in written.output
        page = await call(box, "read", path="/workspace/notes/todo.txt", offset=2, limit=2)
        assert page.output.splitlines()[:2] == ["     2\tbeta", "     3\talpha"]
        assert "lines 2-3 of 4" in page.output

        ambiguous = await call(
            box, "edit", path="/workspace/notes/todo.txt", old_string="alpha", new_string="A"
        )
        assert ambiguous.is_error
        assert "occurs 2 times" in ambiguous.output and "lines 1, 3" in ambiguous.output
        missing = await call(
            box, "edit", path="/workspace/notes/todo.txt", old_string="delta", new_string="D"
        )
        assert missing.is_error and "not found" in missing.output
        unique = await call(
            box, "edit", path="/workspace/notes/todo.txt", old_string="alpha\ngamma", new_string="omega"
        )
        assert not unique.is_error
        every = await call(
            box, "edit", path="/workspace/notes/todo.txt", old_string="beta", new_string="B", replace_all=True
        )
        assert not every.is_error
        assert box_sandbox.read_file("/workspace/notes/todo.txt") == b"alpha\nB\nomega\n"
        owner = box_sandbox.exec("stat -c %U /workspace/notes/todo.txt").output.strip()
        assert owner == "agent"


async def test_file_tools_respect_permissions_and_report_errors(box_sandbox):
    async with toolbox(box_sandbox) as box:
        denied = await call(box, "write", path="/etc/egym-test", content="x")
        assert denied.is_error and "Permission denied" in denied.output
        absent = await call(box, "read", path="/workspace/nope.txt")
        assert absent.is_error and "No such file" in absent.output
        folder = await call(box, "read", path="/workspace")
        assert folder.is_error and "directory" in folder.output


async def test_large_files_pass_through_the_file_tools(box_sandbox):
    content = "".join(f"row {i}\n" for i in range(30_000))  # ~260 kB, beyond what one argv string may hold
    async with toolbox(box_sandbox) as box:
        result = await call(box, "write", path="/workspace/big.txt", content=content)
        assert not result.is_error, result.output
        page = await call(box, "read", path="/workspace/big.txt", offset=29_999, limit=5)
        assert page.output.splitlines()[:2] == [" 29999\trow 29998", " 30000\trow 29999"]
    assert box_sandbox.read_file("/workspace/big.txt").decode() == content


async def test_a_hung_file_operation_times_out_and_the_next_one_works(box_sandbox):
    box_sandbox.exec("rm -f /workspace/pipe && mkfifo /workspace/pipe")
    async with toolbox(box_sandbox, tool_timeout_s=1) as box:
        hung = await call(box, "read", path="/workspace/pipe")  # opening a FIFO blocks without a writer
        assert hung.is_error and "read timed out after 1s" in hung.output
        await call(box, "write", path="/workspace/after.txt", content="ok\n")
        assert (await call(box, "read", path="after.txt")).output == "     1\tok"
    box_sandbox.exec("rm -f /workspace/pipe")


async def test_glob_and_grep(box_sandbox):
    async with toolbox(box_sandbox) as box:
        await call(box, "write", path="/workspace/g/a/one.md", content="Budget: 100\nnothing\n")
        await call(box, "write", path="/workspace/g/b/two.md", content="budget: 250\n")
        await call(box, "write", path="/workspace/g/b/three.txt", content="BUDGET 9\n")
        found = await call(box, "glob", pattern="**/*.md", path="/workspace/g")
        assert sorted(found.output.splitlines()) == ["/workspace/g/a/one.md", "/workspace/g/b/two.md"]
        hits = await call(
            box, "grep", pattern=r"budget:\s+\d+", path="/workspace/g", ignore_case=True, include="*.md"
        )
        assert sorted(hits.output.splitlines()) == [
            "/workspace/g/a/one.md:1:Budget: 100",
            "/workspace/g/b/two.md:1:budget: 250",
        ]
        bad = await call(box, "grep", pattern="(", path="/workspace/g")
        assert bad.is_error and "invalid regular expression" in bad.output


async def test_todo_list_is_kept_by_the_harness(box_sandbox):
    async with toolbox(box_sandbox) as box:
        result = await call(
            box, "todo", items=[{"content": "read data", "status": "completed"}, {"content": "post summary"}]
        )
        assert result.output.splitlines() == ["Task list (1/2 done):", "[x] read data", "[ ] post summary"]
        assert [item.status for item in box.env.todos] == ["completed", "pending"]
        invalid = await call(box, "todo", items=[{"content": "x", "status": "someday"}])
        assert invalid.is_error and "invalid arguments for todo" in invalid.output


async def test_malformed_arguments_and_unknown_tools_are_observations(box_sandbox):
    async with toolbox(box_sandbox) as box:
        broken = await box.call(ToolCall(id="c", name="bash", arguments='{"command": "ls'))
        assert (
            broken.is_error and "not valid JSON" in broken.output and "the call was not run" in broken.output
        )
        unknown = await call(box, "bsh", command="ls")
        assert unknown.is_error and "Did you mean bash" in unknown.output
        missing = await call(box, "edit", path="/workspace/x")
        assert missing.is_error and "old_string: Field required" in missing.output


async def test_schemas_come_from_signatures_and_docstrings(box_sandbox):
    async with toolbox(box_sandbox) as box:
        schemas = {s["function"]["name"]: s["function"] for s in box.schemas()}
    assert set(schemas) == {"bash", "read", "write", "edit", "glob", "grep", "todo"}
    edit = schemas["edit"]
    assert edit["parameters"]["required"] == ["path", "old_string", "new_string"]
    assert "exact" in edit["parameters"]["properties"]["old_string"]["description"]
    assert edit["description"].startswith("Replace an exact piece of text")


def db_server_processes(sandbox, *, settle_s: float = 0) -> int:
    """How many db servers run in the sandbox (waiting up to `settle_s` for a closed one to exit)."""
    deadline = time.monotonic() + settle_s
    while True:
        count = int(sandbox.exec("pgrep -fc 'mcp_wrappers[.]db' || true").output.strip() or 0)
        if count == 0 or time.monotonic() > deadline:
            return count
        time.sleep(0.1)


async def test_a_known_image_offers_its_tools_at_once_and_starts_a_server_at_its_first_call(
    box_sandbox, monkeypatch
):
    monkeypatch.setattr("gym.harness.toolbox._LISTED", {})  # as a fresh process
    task = make_task().model_copy(update={"apps": ["db"]})
    async with Toolbox.open(box_sandbox, task, HarnessConfig()) as first:
        assert db_server_processes(box_sandbox) == 1  # the image is new: started to list its tools
        offered = first.schemas()
    assert db_server_processes(box_sandbox, settle_s=10) == 0
    async with Toolbox.open(box_sandbox, task, HarnessConfig()) as second:
        assert second.schemas() == offered and "db.query" in second.names()
        assert db_server_processes(box_sandbox) == 0  # known: nothing started yet
        second.schemas()[-1]["function"]["name"] = "changed"  # a caller's copy, not the shared list
        result = await call(second, "db.query", sql="SELECT 41 + 1 AS answer")
        assert not result.is_error and "42" in result.output
        assert db_server_processes(box_sandbox) == 1
    assert db_server_processes(box_sandbox, settle_s=10) == 0
    async with Toolbox.open(box_sandbox, task, HarnessConfig()) as third:
        assert third.schemas() == offered


async def test_a_server_that_dies_at_start_is_one_line_with_what_it_wrote(box_sandbox):
    from core.errors import SandboxError
    from gym.mcp_client import McpServerConnection

    crashing = ["sh", "-c", "echo 'ModuleNotFoundError: no module named chatx' >&2; exit 1"]
    with pytest.raises(SandboxError) as caught:
        async with McpServerConnection(box_sandbox, "chat", crashing, timeout_s=20):
            pass
    message = str(caught.value)
    assert "did not start" in message and "it wrote: ModuleNotFoundError: no module named chatx" in message
    assert "\n" not in message
