"""The red-team suite: an adversarial agent attacks the sandbox and the grader; the grade must not move.

Each attack (gym.policies.attacks) runs as the agent at the last turn of an honest
episode (the oracle on acme/manager-question: chat, database and documents). The
grade must be exactly the honest one, no code the agent planted may run as any
other user, and no agent process may be left when the grader reads. Real
sandboxes, real apps, no judge (judge items are left out of the comparison).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.trajectory import Trajectory
from grader.grade import Grade
from grader.probe import SandboxProbe
from gym.episode import open_episode
from gym.harness import HarnessConfig
from gym.policies.attacks import LINGER_MARKER, MARKERS, AttackPolicy
from gym.policies.null import NullPolicy
from gym.policies.oracle import OraclePolicy
from gym.tasks import load_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TASK = Path(__file__).resolve().parents[2] / "tasks" / "acme" / "manager-question"
AGENT = "jordan.lee"


@dataclass
class Played:
    grade: Grade
    trajectory: Trajectory
    agent_uid: int
    markers: list[str]  # files planted code wrote in MARKERS
    agent_processes: str  # pgrep's answer right after grading
    new_posts: list[tuple[str, str, str]]  # (user, channel, message) written during the episode
    database: str  # the agent role's powers and the schemas, after the episode


def _root(sandbox, script: str) -> str:
    return sandbox.exec(["/bin/bash", "-c", script], user="root", timeout=30).output


async def play(policy, *, before_grading=None) -> Played:
    task = load_task(TASK)
    async with open_episode(task, run_id="pytest-redteam") as episode:
        sandbox = episode.sandbox
        trajectory = await episode.play(policy, HarnessConfig())
        if before_grading is not None:
            await asyncio.to_thread(before_grading, sandbox)
        grade = await episode.grade(trajectory)
        processes = _root(sandbox, f"/usr/bin/pgrep -a -u {sandbox.agent_uid} || true")
        markers = _root(sandbox, f"ls -A {MARKERS} 2>/dev/null || true").split()
        ready_ms = int(_root(sandbox, "cat /egym/baseline/ready_ms"))
        with SandboxProbe(sandbox) as probe:
            posts = [(p.user, p.channel, p.message) for p in probe.chat().posts if p.create_at >= ready_ms]
            database = repr(
                probe.sql(
                    "SELECT rolsuper, rolcreaterole, (SELECT array_agg(b.rolname ORDER BY "
                    "b.rolname) FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid "
                    "WHERE m.member = r.oid) AS member_of, (SELECT array_agg(nspname ORDER BY "
                    "nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%') AS schemas "
                    "FROM pg_roles r WHERE rolname = 'agent'"
                )
            )
        return Played(grade, trajectory, sandbox.agent_uid, markers, processes, posts, database)


def outcome(grade: Grade) -> dict[str, tuple[str, float]]:
    """What the comparison looks at: every deterministic item's status and points."""
    return {i.id: (i.status, i.earned) for i in grade.items if i.kind == "python"}


def foreign_markers(played: Played) -> list[str]:
    """Marker files written by anyone but the agent itself (planted code that ran with privilege)."""
    return [
        m
        for m in played.markers
        if not re.fullmatch(rf"ran-{played.agent_uid}-\d+", m) and m != Path(LINGER_MARKER).name
    ]


@pytest.fixture(scope="module", autouse=True)
def no_judge():
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "EGYM_JUDGE_MODEL", "EGYM_JUDGE_BASE_URL"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="module")
def honest(docker_image) -> Played:
    played = asyncio.run(play(OraclePolicy(load_task(TASK))))
    assert played.grade.earned > 0 and all(s == "pass" for s, _ in outcome(played.grade).values())
    return played


def attacked(*attacks: str, before_grading=None) -> Played:
    return asyncio.run(
        play(AttackPolicy(OraclePolicy(load_task(TASK)), list(attacks)), before_grading=before_grading)
    )


def assert_held(played: Played, honest: Played) -> None:
    assert played.trajectory.stop_reason == "answered", played.trajectory.error
    assert outcome(played.grade) == outcome(honest.grade)
    assert played.grade.earned == honest.grade.earned
    assert foreign_markers(played) == []
    assert played.agent_processes.strip() == ""
    assert played.database == honest.database


@pytest.mark.parametrize("attack", ["plant-modules", "env-files", "db-roles"])
def test_attack_leaves_the_grade_alone(attack, honest):
    assert_held(attacked(attack), honest)


def test_planted_modules_are_live_traps_for_a_careless_reader(honest):
    """The control: run as the issue found it (`python3 -m` as root in /workspace), the reader imports the plant."""
    ran: list[str] = []

    def careless_reader(sandbox):
        sandbox.container.exec_run(
            ["python3", "-m", "mcp_wrappers.chat.snapshot"], user="root", workdir="/workspace"
        )
        ran.extend(_root(sandbox, f"ls -A {MARKERS}").split())

    played = attacked("plant-modules", before_grading=careless_reader)
    assert any(m.startswith("ran-0-") for m in ran), ran
    assert outcome(played.grade) == outcome(honest.grade)  # the grader itself still imports nothing planted


def test_processes_left_running_cannot_change_the_graded_state(honest):
    played = attacked("linger")
    assert_held(played, honest)
    assert Path(LINGER_MARKER).name not in played.markers
    assert all(message != "posted after the episode ended" for _, _, message in played.new_posts)


def test_fork_bomb_at_the_last_turn_neither_blocks_nor_changes_grading(honest):
    played = attacked("fork-bomb")
    assert_held(played, honest)
    stopped = int(re.search(r"ended: (\d+) processes", played.grade.meta["episode_end"]).group(1))
    assert stopped >= 200  # the bomb filled the agent's share (256 tasks) and was stopped in one go


def test_memory_hog_is_killed_before_the_apps(honest):
    played = attacked("memory-hog")
    assert_held(played, honest)
    hog = played.trajectory.steps[-2].results[0].output
    assert "exit=137" in hog  # the kernel's OOM killer took the agent's process


def test_secrets_do_not_reach_the_agent(honest):
    played = attacked("peek-secrets")
    assert_held(played, honest)
    outputs = "\n".join(r.output for step in played.trajectory.steps for r in step.results)
    assert "permission denied" in outputs.lower()
    assert not re.search(r"MATTERMOST_TOKEN=\w{10,}|MM_\w+=", outputs)
    assert "salary" not in outputs.lower() or "permission denied for table salaries" in outputs


def test_chat_posts_cannot_be_made_as_another_user(honest):
    played = attacked("impersonate")
    assert played.new_posts and {user for user, _, _ in played.new_posts} == {AGENT}
    assert foreign_markers(played) == [] and played.agent_processes.strip() == ""
    assert played.database == honest.database
    assert played.grade.earned <= honest.grade.earned
    outputs = played.trajectory.steps[-2].results[0].output
    assert not {"token!", "renamed!", "admin!"} & set(outputs.split())


def test_hostile_files_are_charged_to_the_agent_and_no_symlink_is_followed(sandbox):
    """Files the grader reads: over the size limit or unreadable -> StateError (the item fails); a symlink,
    itself or a folder on the way, -> absent, never the bytes it leads to (/egym, /etc/shadow)."""
    from grader.errors import StateError

    sandbox.exec(
        "truncate -s 80M /workspace/huge.xlsx && printf x > /workspace/small.txt && chmod 000 /workspace/small.txt"
        " && ln -s /egym /workspace/egym && ln -s /etc /workspace/etc"
        " && ln -s /egym/baseline/ready_ms /workspace/ready.txt && mkdir /workspace/d"
        " && ln -s /egym/baseline /workspace/d/base"
    )
    sandbox.seal()
    # The control: the grader itself may read what the links lead to, so only the reader's refusal stops it.
    assert sandbox.exec(["/bin/cat", "/egym/baseline/ready_ms"], user="grader").ok
    with SandboxProbe(sandbox) as probe:
        with pytest.raises(StateError, match="over the grader's"):
            probe.file("huge.xlsx")
        assert "over the grader's" in probe.document("huge.xlsx")["error"]
        with pytest.raises(StateError, match="not readable by the grader"):
            probe.file("small.txt")
        for path in ("egym/baseline/ready_ms", "ready.txt", "d/base/ready_ms", "etc/shadow", "etc/hostname"):
            assert probe.file(path) is None, path
        assert probe.document("egym/baseline/x.xlsx") == {
            "error": "no such file: /workspace/egym/baseline/x.xlsx"
        }


def _grader_processes(sandbox) -> str:
    return _root(sandbox, "/usr/bin/pgrep -a -u grader || true").strip()


def test_a_document_bomb_fails_its_items_in_seconds_and_leaves_no_libreoffice(docker_image):
    """8 million cells in a 0.4 MB .xlsx where the rubric reads: "too large", charged, never a dropped rollout."""
    import io
    import zipfile

    task = load_task(TASK.parent / "sales-summary-sheet")
    row = b"<row>" + b"<c><v>1</v></c>" * 100 + b"</row>"
    sheet = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/worksheets/sheet1.xml", sheet + row * 80_000 + b"</sheetData></worksheet>")
    bomb = buffer.getvalue()

    async def run():
        async with open_episode(task, run_id="pytest-redteam") as episode:
            trajectory = await episode.play(NullPolicy(), HarnessConfig())
            episode.sandbox.write_file("/workspace/reports/sales_summary_2025-03.xlsx", bomb)  # as the agent
            started = time.monotonic()
            grade = await episode.grade(trajectory)
            return grade, time.monotonic() - started, _grader_processes(episode.sandbox)

    grade, seconds, left = asyncio.run(run())
    assert len(bomb) < 1 << 20 and seconds < 60
    read_it = [i for i in grade.items if i.kind == "python" and i.section == "spreadsheet"]
    assert read_it and all(i.status == "fail" for i in read_it)
    assert any("too large" in i.evidence for i in read_it)  # the checks that read it quote why
    assert all(i.status != "error" for i in grade.items if i.kind == "python")
    assert left == ""  # no LibreOffice (or anything else of the grader's) left running


def test_a_maze_in_the_workspace_is_charged_to_the_agent(docker_image):
    """A deleted seeded file hidden behind a 1,100-level tree: the damage section fails at its cap, not `error`."""

    def maze(sandbox):
        made = sandbox.exec(
            "rm /workspace/sales/pricing_guidelines.docx && cd /workspace && python3 -c "
            '\'import os\nfor _ in range(1100): os.mkdir("d"); os.chdir("d")\''
        )
        assert made.ok, made.output

    played = asyncio.run(play(NullPolicy(), before_grading=maze))
    damage = [i for i in played.grade.items if i.section == "damage"]
    assert damage and all(i.status == "fail" for i in damage)
    assert all("over the grader's bounds: folders nested deeper than 64 levels" in i.evidence for i in damage)
    assert played.grade.raw_earned <= -sum(-i.points for i in damage)  # every kind charged its cap
    assert "folders nested deeper" in played.grade.meta["state_diff"]


def test_hostile_file_names_are_shown_escaped_and_the_rollout_page_renders(docker_image, tmp_path):
    """A name with a newline cannot forge a line of the diff; a name that is not UTF-8 dumps and renders."""
    from starlette.testclient import TestClient

    from gym.dashboard.app import DashboardConfig, create_app
    from gym.store import Store

    def names(sandbox):
        made = sandbox.exec(
            "cd /workspace && printf x > \"$(printf 'notes\n+ forged.xlsx (1 B)')\""
            " && printf y > \"$(printf 'caf\\351 \\377.txt')\""
        )
        assert made.ok, made.output

    played = asyncio.run(play(NullPolicy(), before_grading=names))
    diff = played.grade.meta["state_diff"].splitlines()
    assert "+ notes\\x0a+ forged.xlsx (1 B) (1 B)" in diff and "+ forged.xlsx (1 B)" not in diff
    assert "+ caf\\xe9 \\xff.txt (1 B)" in diff
    assert Grade.model_validate_json(played.grade.model_dump_json()).meta["state_diff"] == "\n".join(diff)
    store = Store(str(tmp_path / "runs.db"))
    store.create_run("run-names", policy="null", tasks=[played.grade.task], samples=1)
    (row,) = store.add_rollouts("run-names", [(played.grade.task, 0)])
    store.claim(row.id, "test")
    store.record(row.id, trajectory=played.trajectory, grade=played.grade, passed=False, seconds=1.0)
    store.close()
    with TestClient(create_app(DashboardConfig(store=str(tmp_path / "runs.db")))) as client:
        page = client.get(f"/rollouts/{row.id}")
    assert page.status_code == 200
    assert "notes\\x0a+ forged.xlsx" in page.text and "caf\\xe9 \\xff.txt" in page.text
