"""What an episode changed, against the baseline egym-init marks at READY: rows, files, chat posts."""

from __future__ import annotations

import hashlib

import pytest

from grader.changes import Changes, FileChange, PostChange, RowChange, file_changes, post_changes
from grader.chatstate import ChatPost, ChatSnapshot
from grader.probe import SandboxProbe

SEED = """
create table tickets(id serial primary key, title text, status text default 'open');
create table invoices(id int primary key, status text);
create table notes(body text);
insert into tickets(title) values ('a'), ('b');
insert into invoices values (1, 'open'), (2, 'open'), (3, 'open');
insert into notes values ('x'), ('x'), ('y');
grant select, insert, update, delete on tickets, invoices, notes to agent;
grant usage on sequence tickets_id_seq to agent;
"""
CHAT = """
agent_user: dana
team: {name: acme, display_name: Acme}
users: [{username: dana}, {username: raj}]
channels: [{name: finance, members: [dana, raj]}]
posts:
  - {channel: finance, user: raj, message: "keep me"}
  - {channel: finance, user: raj, message: "edit me"}
  - {channel: finance, user: raj, message: "delete me"}
"""
FILES = {"budget.csv": b"a,b\n1,2\n", "old.txt": b"old", "same.txt": b"same", "dir/keep.txt": b"k"}


def _psql(sb, database: str, sql: str) -> None:
    """Run SQL as the database superuser (to stand in for changes the compat chat API cannot make)."""
    result = sb.exec(
        ["/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-d", database, "-c", sql], user="postgres", cwd="/"
    )
    assert result.ok, result.output


@pytest.mark.docker
def test_changes_name_rows_files_and_posts_exactly(live_sandbox):
    sb = live_sandbox(apps=("db", "chat"), sql=SEED, chat=CHAT, files=FILES)
    with SandboxProbe(sb) as probe:
        untouched = probe.changes()
    assert untouched is not None and untouched.summary() == ""  # the initial state is the baseline
    assert set(untouched.sources) == {"rows", "files", "chat"}

    work = (
        "psql -qc \"insert into tickets(title) values ('c')\" "
        "-c \"update invoices set status = 'paid' where id < 3\" -c 'delete from tickets where id = 1' "
        "-c \"delete from notes where body = 'x' and ctid = (select min(ctid) from notes where body = 'x')\" "
        "&& printf 'a,b\\n9,9\\n' > budget.csv && rm old.txt && echo new > fresh.txt"
    )
    assert sb.exec(work, cwd="/workspace").ok
    _psql(sb, "chat", "update posts set message = 'edited' where message = 'edit me'")
    _psql(sb, "chat", "update posts set delete_at = 1 where message = 'delete me'")
    with SandboxProbe(sb) as probe:
        changes = probe.changes()
    assert changes is not None
    assert changes.row_counts == {
        ("invoices", "changed"): 2,
        ("notes", "removed"): 1,
        ("tickets", "deleted"): 1,
        ("tickets", "inserted"): 1,
    }
    assert RowChange("invoices", "changed", {"id": 1}, ("status",)) in changes.rows
    assert RowChange("tickets", "deleted", {"id": 1}) in changes.rows
    assert RowChange("notes", "removed", {"body": "x"}) in changes.rows
    # budget.csv keeps its size (8 bytes): only the hash shows the overwrite.
    assert {(f.path, f.change) for f in changes.files} == {
        ("budget.csv", "modified"),
        ("old.txt", "deleted"),
        ("fresh.txt", "added"),
    }
    assert sorted((p.change, p.message) for p in changes.posts) == [("deleted", ""), ("edited", "edited")]
    diff = changes.summary().splitlines()
    assert diff[:3] == ["--- initial state", "+++ final state", "@@ database (rows)"]
    assert (
        "~ invoices: 2 changed" in diff and "- tickets: 1 deleted" in diff and "+ tickets: 1 inserted" in diff
    )
    assert "~ budget.csv (modified)" in diff and "+ fresh.txt (4 B)" in diff


@pytest.mark.docker
def test_a_sandbox_without_chat_has_no_chat_source_and_the_agent_cannot_see_the_baseline(live_sandbox):
    sb = live_sandbox(sql=SEED)
    with SandboxProbe(sb) as probe:
        changes = probe.changes()
    assert changes is not None and set(changes.sources) == {"rows", "files"}
    for attempt in (
        "psql -Atc 'select count(*) from egym_baseline.invoices'",
        "psql -Atc 'select * from egym_baseline.changes()'",
        "cat /egym/baseline/workspace.json",
    ):
        result = sb.exec(attempt, cwd="/workspace")
        assert not result.ok and "permission denied" in result.output.lower(), (attempt, result.output)


def test_file_changes_compare_hashes_not_times():
    before = {"a.txt": [3, "h1"], "b.txt": [3, "h2"], "gone.txt": [1, "h3"]}
    after = {"a.txt": [3, "h1"], "b.txt": [3, "other"], "c.txt": [9, None]}
    assert file_changes(before, after) == [
        FileChange("b.txt", "modified", 3),
        FileChange("c.txt", "added", 9),
        FileChange("gone.txt", "deleted", 1),
    ]


def test_post_changes_find_new_edited_and_deleted_posts():
    md5 = lambda text: hashlib.md5(text.encode()).hexdigest()  # noqa: E731
    baseline = {"1": md5("kept"), "2": md5("before"), "3": md5("gone")}
    snapshot = ChatSnapshot(
        posts=[
            ChatPost(id="1", channel="finance", user="ana", message="kept", create_at=1),
            ChatPost(id="2", channel="finance", user="ana", message="after", create_at=2),
            ChatPost(id="9", channel="dm:ana,jo", user="jo", message="hi", root_id="1", create_at=9),
        ]
    )
    assert post_changes(baseline, snapshot) == [
        PostChange("9", "dm:ana,jo", "jo", "added", "hi", thread=True),
        PostChange("2", "finance", "ana", "edited", "after"),
        PostChange("3", "?", "?", "deleted"),
    ]


def test_summary_lists_posts_with_their_change():
    changes = Changes(
        posts=[
            PostChange("9", "finance", "jo", "added", "x" * 300, thread=True),
            PostChange("2", "dm:ana,jo", "ana", "edited", "your claim\nwas approved"),
        ]
    )
    assert changes.summary(width=25).splitlines()[2:] == [
        "@@ chat",
        "+ #finance (in thread) @jo: " + "x" * 24 + "…",
        "~ dm:ana,jo @ana: (edited) your claim was …",
    ]
