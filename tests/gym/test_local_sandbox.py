"""LocalSandbox: the Sandbox protocol without Docker, and the harness logic it lets run in `make test-fast`.

Three parts:
- a conformance table run against LocalSandbox and DockerSandbox alike (the Docker
  half is marked `docker`), so the fake cannot drift from the real thing unnoticed;
- Docker-free twins of tests/gym/test_harness_tools.py and test_harness_loop.py
  (the persistent shell, the file tools, the agent loop, seal) — paths are
  relative, since LocalSandbox does not rewrite absolute paths in commands;
- the grader's file checks through SandboxProbe.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from core.errors import SandboxError
from core.trajectory import AssistantTurn, ToolCall, ToolResult
from gym.harness import FaultConfig, HarnessConfig, run_episode
from gym.harness.toolbox import Toolbox
from gym.policies import make_policy
from gym.sandbox.overlay import overlay_tar
from gym.tasks import AgentIdentity, Limits, Overlay, Task, World
from tests.fakes.local_sandbox import LocalSandbox

# -- the protocol, on both implementations -----------------------------------------------------------


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def box(request):
    """A fresh sandbox of each kind (the Docker one is conftest's `sandbox`)."""
    if request.param == "docker":
        yield request.getfixturevalue("sandbox")
        return
    with LocalSandbox.start(run_id="pytest-local") as sandbox:
        yield sandbox


def test_exit_code_and_interleaved_output(box):
    result = box.exec("echo out; echo err >&2; exit 3")
    assert result.exit_code == 3 and not result.ok and not result.timed_out and not result.truncated
    # Both streams in one output. Docker carries them on two pipes, so under load their relative
    # order can flip (seen in CI): lines written back to back are compared as a set.
    assert sorted(result.output.splitlines(keepends=True)) == ["err\n", "out\n"]
    assert box.exec("true").ok
    assert box.exec(["no-such-program-egym"]).exit_code == 127
    killed = box.exec("kill -9 $$")
    assert killed.exit_code == 137 and not killed.timed_out


def test_timeout_kills_the_command_and_says_so(box):
    result = box.exec("echo started; sleep 30; echo never", timeout=1)
    assert result.timed_out and not result.ok
    assert result.exit_code in (124, 137)
    assert "started" in result.output and "never" not in result.output
    assert 0.9 < result.seconds < 10


def test_output_past_max_output_is_cut_and_marked(box):
    result = box.exec("head -c 100000 /dev/zero | tr '\\0' x; echo; echo done", max_output=1000)
    assert result.truncated and result.ok
    assert result.output == "x" * 1000
    small = box.exec("echo short", max_output=1000)
    assert small.output == "short\n" and not small.truncated


def test_files_round_trip_and_read_file_errors(box):
    box.write_file("/workspace/deep/er/note.txt", b"persisted\n")
    assert box.read_file("/workspace/deep/er/note.txt") == b"persisted\n"
    assert box.exec("cat deep/er/note.txt").output == "persisted\n"  # agent commands start in /workspace
    box.exec("printf 'from exec' > made.txt")
    assert box.read_file("/workspace/made.txt") == b"from exec"
    with pytest.raises(FileNotFoundError):
        box.read_file("/workspace/missing.txt")
    with pytest.raises(OSError, match="limit"):
        box.read_file("/workspace/deep/er/note.txt", max_bytes=4)
    with pytest.raises(IsADirectoryError):
        box.read_file("/workspace/deep")


def test_exec_takes_cwd_and_env(box):
    box.write_file("/tmp/conformance/in-tmp.txt", b"here")
    result = box.exec('cat in-tmp.txt; echo " $GREETING"', cwd="/tmp/conformance", env={"GREETING": "hi"})
    assert result.output == "here hi\n"


def test_other_users_follow_the_privilege_rules(box):
    assert box.exec(["/bin/echo", "as root"], user="root").output == "as root\n"
    with pytest.raises(SandboxError, match="absolute path"):
        box.exec(["echo", "x"], user="root")
    with pytest.raises(SandboxError, match="the agent can write there"):
        box.exec(["/bin/true"], user="grader", cwd="/workspace")
    workspace = box.exec("pwd").output.strip()  # as the sandbox itself names it
    with pytest.raises(SandboxError, match="the agent can write there"):
        box.exec(["/bin/true"], user="grader", cwd=workspace)


def test_open_stdio_is_a_bidirectional_stream(box):
    stream = box.open_stdio(
        ["python3", "-u", "-c", "import sys\nfor line in sys.stdin: print(line.strip().upper())"]
    )
    try:
        for word in (b"hello", b"again"):
            stream.write(word + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = stream.read()
                assert chunk, data
                data += chunk
            assert data == word.upper() + b"\n"
    finally:
        stream.close()


def test_seal_ends_the_agents_processes_and_refuses_agent_commands(box):
    assert box.exec("nohup sleep 3171 >/dev/null 2>&1 & (setsid sleep 3172 >/dev/null 2>&1 &); echo ok").ok
    ended = box.seal()
    assert ended.startswith("ended: ")
    with pytest.raises(SandboxError, match="has ended"):
        box.exec("true")
    with pytest.raises(SandboxError, match="has ended"):
        box.open_stdio(["bash"])
    # Nothing the agent left runs on, and the grader still reads and runs (not as the agent).
    left = box.exec(["/usr/bin/pgrep", "-f", "sleep 317[12]"], user="root")
    assert left.exit_code == 1, left.output
    box.write_file("/workspace/graded.txt", b"read after seal", user="root")
    assert box.read_file("/workspace/graded.txt") == b"read after seal"


# -- LocalSandbox only ------------------------------------------------------------------------------


def test_paths_map_under_the_private_root_and_close_removes_it():
    sandbox = LocalSandbox.start()
    try:
        assert sandbox.host_path("/workspace/a/../b.txt") == sandbox.root / "workspace" / "b.txt"
        assert sandbox.host_path("/../../etc/passwd") == sandbox.root / "etc" / "passwd"  # nothing climbs out
        assert sandbox.host_path(f"{sandbox.workspace}/x") == sandbox.root / "workspace" / "x"
        assert sandbox.exec("pwd").output.strip() == sandbox.workspace
        sandbox.exec("ln -s /etc/hostname escape")
        with pytest.raises(IsADirectoryError):  # a symlink is not a regular file (as in DockerSandbox)
            sandbox.read_file("/workspace/escape")
        sandbox.exec("mkdir -p out && ln -s /etc out/link")
        with pytest.raises(PermissionError, match="outside the sandbox"):
            sandbox.read_file("/workspace/out/link/hostname")
        with pytest.raises(PermissionError, match="outside the sandbox"):
            sandbox.write_file("/workspace/out/link/planted", b"x")
    finally:
        sandbox.close()
        sandbox.close()  # idempotent
    assert not sandbox.root.exists()
    with pytest.raises(SandboxError, match="closed"):
        sandbox.exec("true")


def test_close_kills_every_process_it_started():
    sandbox = LocalSandbox.start()
    sandbox.exec("nohup sleep 3173 >/dev/null 2>&1 &")
    sandbox.exec(["/bin/bash", "-c", "nohup sleep 3174 >/dev/null 2>&1 &"], user="root")
    stream = sandbox.open_stdio(["sleep", "3175"])
    sandbox.close()
    assert stream.read() == b""
    import subprocess

    left = subprocess.run(["pgrep", "-f", "sleep 317[345]"], capture_output=True, text=True)
    assert left.returncode == 1, left.stdout


def test_apps_and_database_seeds_are_refused_with_the_way_out():
    with pytest.raises(SandboxError, match="no PostgreSQL.*mark the test @pytest.mark.docker"):
        LocalSandbox.start(apps=["db"])


def test_a_workspace_overlay_is_applied_and_a_sql_seed_refused(tmp_path):
    (tmp_path / "files" / "sub").mkdir(parents=True)
    (tmp_path / "files" / "sub" / "readme.txt").write_text("welcome")
    overlay = overlay_tar((Overlay(workspace="files"), tmp_path))
    with LocalSandbox.start(overlay=overlay) as sandbox:
        assert sandbox.read_file("/workspace/sub/readme.txt") == b"welcome"
    (tmp_path / "data.sql").write_text("select 1;")
    with pytest.raises(SandboxError, match="data.sql"):
        LocalSandbox.start(overlay=overlay_tar((Overlay(sql=["data.sql"]), tmp_path)))


# -- the harness's built-in tools (twins of test_harness_tools.py) ----------------------------------------------


@pytest.fixture(scope="module")
def local():
    with LocalSandbox.start(run_id="pytest-local-harness") as sandbox:
        yield sandbox


def tools(sandbox: LocalSandbox, *, tool_timeout_s: float = 10, output_cap: int = 30_000):
    task = Task(
        id="tools",
        title="tools",
        world="w",
        prompt="p",
        apps=[],
        limits=Limits(tool_timeout_s=tool_timeout_s),
    )
    config = HarnessConfig(mcp_servers={}, output_cap_chars=output_cap, workdir=sandbox.workspace)
    return Toolbox.open(sandbox, task, config)


async def call(box: Toolbox, name: str, **args) -> ToolResult:
    return await box.call(ToolCall(id="c1", name=name, arguments=json.dumps(args)))


async def test_shell_keeps_cwd_and_exported_variables(local):
    async with tools(local) as box:
        first = await call(box, "bash", command="mkdir -p deep/er && cd deep/er && export GREETING=hi")
        assert not first.is_error, first.output
        second = await call(box, "bash", command="pwd; echo $GREETING; cd ..; false")
        assert second.output.splitlines()[:2] == [f"{local.workspace}/deep/er", "hi"]
        assert "[exit code 1]" in second.output and not second.is_error
        assert (await call(box, "bash", command="pwd")).output == f"{local.workspace}/deep"


async def test_shell_output_is_capped_with_a_note(local):
    async with tools(local, output_cap=2000) as box:
        result = await call(box, "bash", command="seq 1 100000")
        assert result.output.startswith("1\n2\n3\n") and result.output.rstrip().endswith("100000")
        assert "bytes of output cut here" in result.output and len(result.output) < 3000


async def test_hanging_command_times_out_and_the_shell_carries_on(local):
    async with tools(local, tool_timeout_s=0.5) as box:
        hung = await call(box, "bash", command="export KEPT=yes; echo started; sleep 6007")
        assert hung.is_error and "started" in hung.output and "timed out after 0.5s" in hung.output
        after = await call(box, "bash", command="echo $KEPT; pgrep -f 'sleep 6007' || echo no-sleep-left")
        assert after.output.splitlines() == ["yes", "no-sleep-left"]


async def test_a_stuck_or_exited_shell_is_restarted_in_the_same_directory(local):
    async with tools(local, tool_timeout_s=0.5) as box:
        await call(box, "bash", command="mkdir -p stuck && cd stuck && export GONE=1")
        stuck = await call(box, "bash", command="while :; do :; done")
        assert stuck.is_error and f"restarted in {local.workspace}/stuck" in stuck.output
        after = await call(box, "bash", command='pwd; echo "gone=$GONE"')
        assert after.output.splitlines() == [f"{local.workspace}/stuck", "gone="]
        assert "restarted" in (await call(box, "bash", command="exit 4")).output
        assert (await call(box, "bash", command="echo alive")).output == "alive"


async def test_bash_quoting_heredocs_and_stdin(local):
    async with tools(local) as box:
        script = 'cat <<\'EOF\'\nit\'s "quoted" $HOME\nEOF\nread line; echo "read:[$line]"'
        result = await call(box, "bash", command=script)
        assert result.output.splitlines() == ['it\'s "quoted" $HOME', "read:[]"]


async def test_write_read_and_edit(local):
    async with tools(local) as box:
        written = await call(box, "write", path="notes/todo.txt", content="alpha\nbeta\nalpha\ngamma\n")
        assert not written.is_error and "4 lines" in written.output, written.output
        page = await call(box, "read", path="notes/todo.txt", offset=2, limit=2)
        assert page.output.splitlines()[:2] == ["     2\tbeta", "     3\talpha"]
        assert "lines 2-3 of 4" in page.output
        ambiguous = await call(box, "edit", path="notes/todo.txt", old_string="alpha", new_string="A")
        assert (
            ambiguous.is_error and "occurs 2 times" in ambiguous.output and "lines 1, 3" in ambiguous.output
        )
        missing = await call(box, "edit", path="notes/todo.txt", old_string="delta", new_string="D")
        assert missing.is_error and "not found" in missing.output
        assert not (
            await call(box, "edit", path="notes/todo.txt", old_string="alpha\ngamma", new_string="omega")
        ).is_error
        every = await call(
            box, "edit", path="notes/todo.txt", old_string="beta", new_string="B", replace_all=True
        )
        assert not every.is_error
        assert local.read_file("/workspace/notes/todo.txt") == b"alpha\nB\nomega\n"
        absent = await call(box, "read", path="nope.txt")
        assert absent.is_error and "No such file" in absent.output
        folder = await call(box, "read", path=".")
        assert folder.is_error and "directory" in folder.output


async def test_large_files_pass_through_the_file_tools(local):
    content = "".join(f"row {i}\n" for i in range(30_000))
    async with tools(local) as box:
        assert not (await call(box, "write", path="big.txt", content=content)).is_error
        page = await call(box, "read", path="big.txt", offset=29_999, limit=5)
        assert page.output.splitlines()[:2] == [" 29999\trow 29998", " 30000\trow 29999"]
    assert local.read_file("/workspace/big.txt").decode() == content


async def test_a_hung_file_operation_times_out_and_the_next_one_works(local):
    local.exec("rm -f pipe && mkfifo pipe")
    async with tools(local, tool_timeout_s=0.5) as box:
        hung = await call(box, "read", path="pipe")  # opening a FIFO blocks without a writer
        assert hung.is_error and "read timed out after 0.5s" in hung.output
        await call(box, "write", path="after.txt", content="ok\n")
        assert (await call(box, "read", path="after.txt")).output == "     1\tok"
    local.exec("rm -f pipe")


async def test_glob_grep_and_todo(local):
    async with tools(local) as box:
        await call(box, "write", path="g/a/one.md", content="Budget: 100\nnothing\n")
        await call(box, "write", path="g/b/two.md", content="budget: 250\n")
        await call(box, "write", path="g/b/three.txt", content="BUDGET 9\n")
        found = await call(box, "glob", pattern="**/*.md", path="g")
        assert sorted(found.output.splitlines()) == [
            f"{local.workspace}/g/a/one.md",
            f"{local.workspace}/g/b/two.md",
        ]
        hits = await call(box, "grep", pattern=r"budget:\s+\d+", path="g", ignore_case=True, include="*.md")
        assert sorted(hits.output.splitlines()) == [
            f"{local.workspace}/g/a/one.md:1:Budget: 100",
            f"{local.workspace}/g/b/two.md:1:budget: 250",
        ]
        todo = await call(
            box, "todo", items=[{"content": "check budgets", "status": "completed"}, {"content": "report"}]
        )
        assert todo.output.splitlines() == ["Task list (1/2 done):", "[x] check budgets", "[ ] report"]


# -- the agent loop (twins of test_harness_loop.py) ---------------------------------------------------------------

# A small MCP server started in the sandbox (its store under $TMPDIR, which is the sandbox's own /tmp).
DEMO_SERVER = '''
import pathlib
import tempfile
import time
from mcp.server.mcpserver import MCPServer

app = MCPServer("demo")
STORE = pathlib.Path(tempfile.gettempdir()) / "demo-store"

@app.tool()
def save(key: str, value: str) -> str:
    """Store a value under a key."""
    STORE.mkdir(exist_ok=True)
    (STORE / key).write_text(value)
    return f"saved {key}"

@app.tool()
def nap(seconds: float) -> str:
    """Block for a while, like an app that hangs."""
    time.sleep(seconds)
    return "woke"

app.run()
'''
DEMO = {"demo": ["python3", "-c", DEMO_SERVER]}
WORLD = World(
    name="w",
    company="Acme Corp",
    date=dt.date(2025, 3, 14),
    description="Acme sells anvils.",
    agent=AgentIdentity(
        name="Dana Reyes", title="Finance Analyst", email="dana@acme.test", chat_username="dana"
    ),
)
SOLUTION = [
    {"tool": "bash", "args": {"command": "mkdir -p reports && cd reports && export TOTAL=$((40 + 2))"}},
    {"tool": "bash", "args": {"command": 'echo "total=$TOTAL" > summary.txt && basename $(pwd)'}},
    {"tool": "write", "args": {"path": "notes.md", "content": "status: pending\n"}},
    {"tool": "edit", "args": {"path": "notes.md", "old_string": "pending", "new_string": "approved"}},
    {"tool": "read", "args": {"path": "notes.md"}},
    {"tool": "demo.save", "args": {"key": "status", "value": "approved"}},
    {"tool": "todo", "args": {"items": [{"content": "write the report", "status": "completed"}]}},
    {"answer": "The report is in reports/."},
]


def make_task(tmp_path: Path, solution=None, **limits) -> Task:
    folder = tmp_path / "report"
    (folder / "solution").mkdir(parents=True, exist_ok=True)
    (folder / "solution" / "actions.yaml").write_text(yaml.safe_dump(solution or SOLUTION))
    return Task(
        id="report",
        title="Write the report",
        world="w",
        prompt="Write the quarterly report.",
        apps=[],
        limits=Limits(**limits),
        path=folder,
    )


def config(sandbox: LocalSandbox, **fields) -> HarnessConfig:
    return HarnessConfig(workdir=sandbox.workspace, **{"mcp_servers": {}, **fields})


class Scripted:
    """A test policy: a function of the conversation."""

    name = "scripted"

    def __init__(self, decide):
        self.decide = decide
        self.seen = []

    async def next(self, messages, tools):
        self.seen.append(messages)
        return self.decide(messages, tools)


def bash_turn(command: str, call_id: str = "c") -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))]
    )


@pytest.fixture
def fresh():
    with LocalSandbox.start(run_id="pytest-local-loop") as sandbox:
        yield sandbox


async def test_oracle_replays_a_multi_step_task(fresh, tmp_path):
    task = make_task(tmp_path)
    trajectory = await run_episode(
        fresh, task, WORLD, make_policy("oracle", task=task), config(fresh, mcp_servers=DEMO)
    )
    assert trajectory.error is None, trajectory.meta.get("traceback")
    assert trajectory.stop_reason == "answered" and trajectory.final_answer == "The report is in reports/."
    assert [c.name for c in trajectory.tool_calls()] == [s["tool"] for s in SOLUTION[:-1]]
    results = [r for step in trajectory.steps for r in step.results]
    assert not any(r.is_error for r in results), [r.output for r in results if r.is_error]
    assert results[1].output == "reports"  # the first call's cd carried over
    assert "approved" in results[4].output
    assert fresh.read_file("/workspace/reports/summary.txt") == b"total=42\n"
    assert (
        fresh.read_file("/workspace/reports/notes.md") == b"status: approved\n"
    )  # relative to the shell's cwd
    assert fresh.read_file("/tmp/demo-store/status") == b"approved"
    assert trajectory.meta["todos"] == [{"content": "write the report", "status": "completed"}]
    assert "demo.save" in trajectory.meta["tools"]
    assert "Dana Reyes, Finance Analyst at Acme Corp" in trajectory.messages[0].content


async def test_turn_limit_and_on_step(fresh, tmp_path):
    seen = []

    def watch(step):
        seen.append((step.index, [r.output.strip() for r in step.results]))
        raise RuntimeError("a broken live view")

    trajectory = await run_episode(
        fresh,
        make_task(tmp_path, max_turns=2),
        WORLD,
        Scripted(lambda m, t: bash_turn("echo hi")),
        config(fresh),
        on_step=watch,
    )
    assert trajectory.stop_reason == "turn_limit" and trajectory.truncated and trajectory.error is None
    assert seen == [(0, ["hi"]), (1, ["hi"])]


async def test_time_limit_truncates_a_slow_tool_call(fresh, tmp_path):
    task = make_task(tmp_path, time_limit_s=1, tool_timeout_s=120)
    trajectory = await run_episode(
        fresh, task, WORLD, Scripted(lambda m, t: bash_turn("sleep 60")), config(fresh)
    )
    assert trajectory.stop_reason == "time_limit" and trajectory.truncated and trajectory.error is None


async def test_a_hung_command_times_out_and_the_loop_carries_on(fresh, tmp_path):
    def decide(messages, tools):
        turns = sum(m.role == "assistant" for m in messages)
        return [bash_turn("sleep 600"), bash_turn("echo still-here"), AssistantTurn(content="ok")][turns]

    trajectory = await run_episode(
        fresh, make_task(tmp_path, tool_timeout_s=0.5), WORLD, Scripted(decide), config(fresh)
    )
    assert trajectory.stop_reason == "answered"
    first, second = (step.results[0] for step in trajectory.steps[:2])
    assert first.is_error and "timed out after 0.5s" in first.output
    assert second.output == "still-here"


async def test_malformed_arguments_and_unknown_tools_come_back_to_the_model(fresh, tmp_path):
    def decide(messages, tools):
        if messages[-1].role == "user":
            return AssistantTurn(
                tool_calls=[
                    ToolCall(id="bad", name="bash", arguments='{"command": '),
                    ToolCall(id="typo", name="bsah", arguments="{}"),
                ]
            )
        return AssistantTurn(content=" | ".join(m.content for m in messages[-2:]))

    trajectory = await run_episode(fresh, make_task(tmp_path), WORLD, Scripted(decide), config(fresh))
    assert trajectory.stop_reason == "answered"
    assert "not valid JSON" in trajectory.final_answer and "Did you mean bash" in trajectory.final_answer


async def test_injected_faults_are_seeded_and_a_faulted_call_never_reaches_the_app(fresh, tmp_path):
    saves = [{"tool": "demo.save", "args": {"key": f"k{i}", "value": str(i)}} for i in range(8)]
    task = make_task(tmp_path, solution=[*saves, {"answer": "saved"}])

    async def run(seed: int):
        fresh.exec('rm -rf "$TMPDIR/demo-store"')
        cfg = config(fresh, mcp_servers=DEMO, faults=FaultConfig(rate=0.5, seed=seed))
        trajectory = await run_episode(fresh, task, WORLD, make_policy("oracle", task=task), cfg)
        return trajectory, fresh.exec('ls "$TMPDIR/demo-store"').output.split()

    first, stored = await run(seed=7)
    again, _ = await run(seed=7)
    results = [r for step in first.steps for r in step.results]
    faulted = [r for r in results if r.fault]
    assert 0 < len(faulted) < 8 and first.faults() == again.faults()
    assert sorted(stored) == sorted(f"k{i}" for i, r in enumerate(results) if not r.fault)


async def test_the_loop_compacts_the_context(fresh, tmp_path):
    def decide(messages, tools):
        turn = len(policy.seen)
        return bash_turn("seq 100000 103000", f"c{turn}") if turn <= 6 else AssistantTurn(content="finished")

    policy = Scripted(decide)
    cfg = config(fresh, context={"window": 7000, "reserve_tokens": 1000, "keep_recent_turns": 2})
    trajectory = await run_episode(fresh, make_task(tmp_path), WORLD, policy, cfg)
    assert trajectory.stop_reason == "answered", trajectory.error
    assert any(step.compacted for step in trajectory.steps)
    assert all(step.context_tokens <= 6000 for step in trajectory.steps)


async def test_a_hung_mcp_call_times_out_and_the_server_keeps_answering(fresh, tmp_path):
    steps = [
        {"tool": "demo.nap", "args": {"seconds": 30}},
        {"tool": "demo.save", "args": {"key": "k", "value": "v"}},
        {"answer": "ok"},
    ]
    task = make_task(tmp_path, solution=steps, tool_timeout_s=0.5)
    trajectory = await run_episode(
        fresh, task, WORLD, make_policy("oracle", task=task), config(fresh, mcp_servers=DEMO)
    )
    assert trajectory.stop_reason == "answered", trajectory.error
    hung, saved = (step.results[0] for step in trajectory.steps[:2])
    assert hung.is_error and "timed out" in hung.output
    assert saved.output == "saved k" and not saved.is_error


async def test_after_the_episode_seal_stops_what_the_agent_left_and_the_grader_reads_the_files(
    fresh, tmp_path
):
    def decide(messages, tools):
        if len(messages) == 2:
            return bash_turn(
                "echo final > answer.txt; (sleep 3176; echo late > answer.txt) >/dev/null 2>&1 &"
            )
        return AssistantTurn(content="done")

    trajectory = await run_episode(fresh, make_task(tmp_path), WORLD, Scripted(decide), config(fresh))
    assert trajectory.stop_reason == "answered"
    assert fresh.seal().startswith("ended: ")
    assert fresh.exec(["/usr/bin/pgrep", "-f", "sleep 3176"], user="root").exit_code == 1
    assert fresh.read_file("/workspace/answer.txt") == b"final\n"


# -- the grader's file checks (twin of the sandbox half of tests/grader/checks/test_files.py) -------------------


def test_grader_file_checks_read_a_local_sandbox(tmp_path):
    from grader.checks import files
    from grader.checks.base import CheckContext
    from grader.probe import SandboxProbe

    (tmp_path / "ws" / "notes").mkdir(parents=True)
    (tmp_path / "ws" / "notes" / "summary.md").write_text("# Summary\nTotal due: 95.25 EUR\n")
    (tmp_path / "ws" / "empty.txt").write_text("")
    with (
        LocalSandbox.start(overlay=overlay_tar((Overlay(workspace="ws"), tmp_path))) as sandbox,
        SandboxProbe(sandbox) as probe,
    ):
        ctx = CheckContext(probe)
        assert files.file_exists(ctx, path="notes/summary.md").passed
        assert files.file_exists(ctx, path="/workspace/notes/summary.md").passed
        assert not files.file_exists(ctx, path="empty.txt").passed
        assert files.file_exists(ctx, path="empty.txt", min_bytes=0).passed
        assert files.file_absent(ctx, path="notes/other.md").passed
        assert not files.file_exists(ctx, path="notes").passed  # a folder is not a file
        assert files.file_contains(ctx, path="notes/summary.md", regex=r"95\.25\s+EUR").passed
        assert not files.file_contains(
            ctx, path="notes/summary.md", text="total DUE", case_sensitive=True
        ).passed
