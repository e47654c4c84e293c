"""The final-state diff: what an episode changed, against the baseline egym-init marks at READY."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.chatstate import ChatPost, ChatSnapshot
from grader.state_diff import chat_lines, file_lines, state_diff
from gym.sandbox import DockerSandbox
from gym.sandbox.overlay import overlay_tar
from gym.tasks import Overlay

SEED = """
create table tickets(id serial primary key, title text);
create table invoices(id int primary key, status text);
create table untouched(id int);
insert into tickets(title) values ('a'), ('b');
insert into invoices values (1, 'open'), (2, 'open'), (3, 'open');
insert into untouched values (1);
grant select, insert, update, delete on tickets, invoices to agent;
grant usage on sequence tickets_id_seq to agent;
"""


@pytest.mark.docker
def test_the_diff_shows_rows_files_and_nothing_from_the_seed(docker_image, tmp_path: Path):
    (tmp_path / "data.sql").write_text(SEED)
    (tmp_path / "ws").mkdir()
    for name in ("budget.csv", "old.txt", "same.txt"):
        (tmp_path / "ws" / name).write_text(name)
    overlay = overlay_tar((Overlay(sql=["data.sql"], workspace="ws"), tmp_path))
    with DockerSandbox.start(docker_image, overlay=overlay, run_id="pytest") as sb:
        assert state_diff(sb) == ""  # the initial state itself is the baseline
        work = (
            "psql -qc \"insert into tickets(title) values ('c'), ('d')\" "
            "-c \"update invoices set status = 'paid' where id < 3\" -c 'delete from tickets where id = 1' "
            "&& mkdir -p reports && printf 'x%.0s' {1..2048} > reports/new.csv "
            "&& echo changed >> budget.csv && rm old.txt"
        )
        assert sb.exec(work, cwd="/workspace").ok
        diff = state_diff(sb).splitlines()
    assert diff[:2] == ["--- initial state", "+++ final state"]
    assert diff[2:] == [
        "@@ database (rows)",
        "~ invoices: 2 updated",
        "+ tickets: 2 inserted",
        "- tickets: 1 deleted",
        "@@ files in /workspace",
        "+ reports/new.csv (2.0 KB)",
        "~ budget.csv (modified)",
        "- old.txt (deleted)",
    ]


def test_file_lines_compare_size_and_mtime():
    before = "a.txt\t3\t100.0\nb.txt\t3\t100.0\n"
    after = "a.txt\t3\t100.0\nb.txt\t3\t250.5\nc.txt\t9\t300.0\n"
    assert file_lines(before, after) == ["+ c.txt (9 B)", "~ b.txt (modified)"]


def test_chat_lines_list_posts_after_the_baseline_only():
    snapshot = ChatSnapshot(
        posts=[
            ChatPost(id="1", channel="finance", user="ana", message="initial history", create_at=1_000),
            ChatPost(
                id="3",
                channel="dm:ana,jordan.lee",
                user="jordan.lee",
                message="your claim\nwas approved",
                create_at=3_000,
            ),
            ChatPost(
                id="2", channel="finance", user="jordan.lee", message="x" * 300, root_id="1", create_at=2_000
            ),
        ]
    )
    lines = chat_lines(snapshot, since_ms=2_000, width=25)
    assert lines == [
        "+ #finance (in thread) @jordan.lee: " + "x" * 24 + "…",
        "+ dm:ana,jordan.lee @jordan.lee: your claim was approved",
    ]
