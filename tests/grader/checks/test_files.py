"""File checks against a real sandbox's filesystem, and transcript checks on a trajectory."""

from __future__ import annotations

import pytest

from core.trajectory import AssistantTurn, Step, ToolCall, Trajectory
from grader.checks import files, transcript
from grader.checks.base import CheckContext
from grader.probe import SandboxProbe


@pytest.fixture(scope="module")
def ctx(live_sandbox):
    sandbox = live_sandbox(files={"notes/summary.md": b"# Summary\nTotal due: 95.25 EUR\n", "empty.txt": b""})
    probe = SandboxProbe(sandbox)
    yield CheckContext(probe)
    probe.close()


@pytest.mark.docker
def test_file_exists_and_absent(ctx):
    assert files.file_exists(ctx, path="notes/summary.md").passed
    assert files.file_exists(ctx, path="/workspace/notes/summary.md").passed
    assert not files.file_exists(ctx, path="empty.txt").passed  # exists, but holds nothing
    assert files.file_exists(ctx, path="empty.txt", min_bytes=0).passed
    assert not files.file_exists(ctx, path="notes/other.md").passed
    assert files.file_absent(ctx, path="notes/other.md").passed
    assert not files.file_absent(ctx, path="notes/summary.md").passed
    assert not files.file_exists(ctx, path="notes").passed  # a folder is not a file


@pytest.mark.docker
def test_file_contains(ctx):
    assert files.file_contains(ctx, path="notes/summary.md", text="total DUE").passed
    assert not files.file_contains(ctx, path="notes/summary.md", text="total DUE", case_sensitive=True).passed
    assert files.file_contains(ctx, path="notes/summary.md", regex=r"95\.25\s+EUR").passed
    assert not files.file_contains(ctx, path="notes/summary.md", regex=r"96\.25").passed
    assert not files.file_contains(ctx, path="missing.md", text="x").passed


TRAJ = Trajectory(
    task="acme/t",
    policy="p",
    final_answer="Posted the 2 discrepancies (INV-2, INV-3).",
    steps=[
        Step(
            index=0,
            turn=AssistantTurn(
                tool_calls=[
                    ToolCall(id="1", name="db_query", arguments='{"sql": "SELECT * FROM invoices"}'),
                    ToolCall(
                        id="2",
                        name="chat_post_message",
                        arguments='{"channel": "finance", "message": "INV-2"}',
                    ),
                ]
            ),
        ),
        Step(index=1, turn=AssistantTurn(tool_calls=[ToolCall(id="3", name="bash", arguments="{not json")])),
    ],
)


def test_tool_used_and_not_used():
    ctx = CheckContext(probe=None, trajectory=TRAJ)
    assert transcript.tool_used(ctx, name="chat_*").passed
    assert transcript.tool_used(ctx, name="chat_post_message", args={"channel": "finance"}).passed
    assert not transcript.tool_used(ctx, name="chat_post_message", args={"channel": "general"}).passed
    assert not transcript.tool_used(ctx, name="db_query", min_count=2).passed
    assert transcript.tool_not_used(ctx, name="office_*").passed
    assert not transcript.tool_not_used(ctx, name="bash").passed
    assert transcript.tool_not_used(
        CheckContext(probe=None), name="bash"
    ).passed  # no trajectory: nothing used


def test_final_answer_contains_and_absent():
    ctx = CheckContext(probe=None, trajectory=TRAJ)
    assert transcript.final_answer_contains(ctx, text="inv-3").passed
    assert transcript.final_answer_contains(ctx, regex=r"\b2 discrepancies").passed
    assert not transcript.final_answer_contains(ctx, text="INV-1").passed
    assert transcript.final_answer_absent(ctx, regex="salary").passed
    assert not transcript.final_answer_absent(ctx, text="INV-2").passed
    assert not transcript.final_answer_contains(CheckContext(probe=None), text="x").passed
