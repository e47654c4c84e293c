"""Grading the agent cannot break, and rubric input lint refuses: each case ends in a grade or one line.

- what the agent leaves behind (a pattern-bombing answer, hostile file names, a maze, a
  document bomb, symlinks) is charged to it: the item fails, the grade is complete;
- a check sees a read-only probe: no sandbox, no writes through SQL;
- absurd rubric input (a huge foreach, a catastrophic pattern, a huge prompt) is a lint error.

The listing program and the file copier run on this host's files here; the red-team
suite (tests/gym/test_redteam.py) runs them in real sandboxes.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import time
import zipfile
from pathlib import Path

import pytest

import grader.checks as registry
from core.shown import json_safe, shown
from core.trajectory import Trajectory
from grader.changes import Changes, FileChange, PostChange
from grader.errors import StateError
from grader.grade import Grade, ItemResult
from grader.lint import LintReport, lint_rubric
from grader.lint_limits import MAX_FOREACH, catastrophic
from grader.probe import SandboxProbe, StaticProbe
from grader.score import grade
from gym.lint import MAX_PROMPT_BYTES, lint
from mcp_wrappers import safe_copy
from mcp_wrappers.office import bounds
from tests.grader.conftest import make_rubric, py_item

REPO = Path(__file__).resolve().parents[2]
NEWLINE_NAME = "report.txt\n+ forged.xlsx (1 B)"
BYTES_NAME = b"caf\xe9 \xff.txt".decode("utf-8", "surrogateescape")  # Latin-1 bytes: not UTF-8


# -- patterns: a catastrophic one ends in a grade within seconds ------------------------------------


def test_a_catastrophic_pattern_fails_its_item_in_seconds_and_the_grade_is_complete():
    answer = "a" * 5_000 + "!"
    rubric = make_rubric(
        [
            py_item("answer", "transcript.final_answer_contains", 2, args={"regex": r"^(a|a)*$"}),
            py_item(
                "no-dump",
                "transcript.final_answer_contains",
                -3,
                negate=True,
                args={"regex": r"^(a|a)*$"},
            ),
        ]
    )
    started = time.monotonic()
    result = grade(rubric, StaticProbe(), Trajectory(task="acme/test", policy="test", final_answer=answer))
    assert time.monotonic() - started < 10
    answer_item, penalty = result.items[:2]
    assert answer_item.status == "fail" and "ran over" in answer_item.evidence
    # A StateError counts against the agent even on a negated penalty: it fires, never flips to a pass.
    assert penalty.status == "fail" and penalty.earned == -3
    assert not result.incomplete and result.raw_earned == -3


def _state_error(ctx, **_):
    raise StateError("the agent's document is too large")


def _reach_sandbox(ctx, **_):
    ctx.probe.sandbox.exec(["/bin/true"], user="root")
    return True


def _write_probe(ctx, **_):
    ctx.probe.sandbox = object()
    return True


@pytest.mark.parametrize("points, negate", [(2, False), (2, True), (-2, False), (-2, True)])
def test_a_state_error_counts_against_the_agent_whatever_the_sign_or_negate(monkeypatch, points, negate):
    monkeypatch.setitem(registry._cache, "tests.hostile:state_error", _state_error)
    item = py_item("x", "tests.hostile:state_error", points, negate=negate)
    result = grade(
        make_rubric([item, py_item("ok", "transcript.final_answer_contains", 1, args={"text": "y"})]),
        StaticProbe(),
        Trajectory(task="acme/test", policy="test", final_answer="y"),
    )
    found = result.items[0]
    assert found.status == "fail" and found.evidence == "the agent's document is too large"
    assert found.earned == (points if points < 0 else 0)


@pytest.mark.parametrize("check", [_reach_sandbox, _write_probe])
def test_a_check_cannot_reach_the_sandbox_behind_its_probe(monkeypatch, check):
    ran = []

    class Sandbox:
        def exec(self, cmd, **kw):
            ran.append(cmd)

    class LiveProbe(StaticProbe):  # a probe with a sandbox behind it, as SandboxProbe has
        sandbox = Sandbox()

    monkeypatch.setitem(registry._cache, "tests.hostile:check", check)
    result = grade(make_rubric([py_item("x", "tests.hostile:check", 1)]), LiveProbe())
    item = result.items[0]
    assert item.status == "error" and "AttributeError" in item.error
    assert ran == []
    if check is _reach_sandbox:
        assert (
            "checks read the final state only through changes, chat, document, file, mail, prefetch, sql"
            in item.error
        )


# -- names the agent chose: carried as bytes, shown escaped, always dumpable ---------------------------


def test_names_are_shown_on_one_line_with_stray_bytes_and_controls_escaped():
    assert shown(NEWLINE_NAME) == "report.txt\\x0a+ forged.xlsx (1 B)"
    assert shown(BYTES_NAME) == "caf\\xe9 \\xff.txt"
    assert shown("a\\b\x1b[2J\u202e.txt") == "a\\\\b\\x1b[2J\\u202e.txt"
    assert shown("résumé 报告 😀.xlsx") == "résumé 报告 😀.xlsx"  # printable text is kept
    assert json_safe(BYTES_NAME + "\n") == "caf\\xe9 \\xff.txt\n"


def test_a_diff_of_hostile_names_cannot_forge_lines():
    changes = Changes(
        files=[FileChange(NEWLINE_NAME, "added", 1), FileChange(BYTES_NAME, "deleted", 3)],
        posts=[PostChange("p1", "sales", "dana", "added", "done\x1b[2K\nfine")],
        sources=("files", "chat"),
    )
    lines = changes.summary().splitlines()
    assert lines == [
        "--- initial state",
        "+++ final state",
        "@@ files in /workspace",
        "+ report.txt\\x0a+ forged.xlsx (1 B) (1 B)",
        "- caf\\xe9 \\xff.txt (deleted)",
        "@@ chat",
        "+ #sales @dana: done\\x1b[2K fine",
    ]
    json.dumps(changes.summary()).encode()  # nothing left that UTF-8 refuses


def test_a_grade_quoting_a_non_utf8_name_dumps_and_loads():
    item = ItemResult(
        id="damage.files", points=-2, status="fail", earned=-2, evidence=f"{BYTES_NAME} deleted"
    )
    g = Grade(task="w/t", earned=0, possible=1, normalized=0, items=[item], meta={"note": BYTES_NAME})
    again = Grade.model_validate_json(g.model_dump_json())
    assert (
        again.items[0].evidence == "caf\\xe9 \\xff.txt deleted" and again.meta["note"] == "caf\\xe9 \\xff.txt"
    )


# -- the workspace listing: iterative, bounded, bytes-safe ----------------------------------------------


def _list_workspace(root: Path, **limits):
    loader = importlib.machinery.SourceFileLoader(
        "list_workspace", str(REPO / "images/world/bin/list-workspace")
    )
    spec = importlib.util.spec_from_loader("list_workspace", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    module.ROOT = str(root)
    for name, value in limits.items():
        setattr(module, name, value)
    return module


def test_a_deep_maze_is_listed_without_recursion_and_reported_over_the_bounds(tmp_path):
    (tmp_path / "seed.txt").write_text("seed")
    levels = [tmp_path / "d"]
    for _ in range(1_099):  # deeper than Python's recursion limit lets os.walk (or os.makedirs) go
        levels.append(levels[-1] / "d")
    for level in levels:
        level.mkdir()
    (tmp_path / "loop").symlink_to(tmp_path)  # never followed
    try:
        listing, over = _list_workspace(tmp_path).walk(None)
    finally:
        for level in reversed(levels):  # shutil.rmtree recurses too
            level.rmdir()
    assert over == "folders nested deeper than 64 levels"
    assert listing["seed.txt"][1] is not None and listing["loop"][1] == "symlink"


def test_the_listing_stops_at_its_file_bound_and_keeps_names_as_bytes(tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9 \xff.txt"
    with open(raw, "wb") as f:
        f.write(b"x")
    (tmp_path / NEWLINE_NAME).write_text("y")
    module = _list_workspace(tmp_path)
    listing, over = module.walk(None)
    assert over is None and set(listing) == {BYTES_NAME, NEWLINE_NAME}
    text = json.dumps({"files": listing, "over": over})  # what the program prints: ASCII JSON
    assert text.isascii() and set(json.loads(text)["files"]) == {BYTES_NAME, NEWLINE_NAME}
    for i in range(5):
        (tmp_path / f"f{i}").write_text("z")
    assert _list_workspace(tmp_path, MAX_FILES=4).walk(None)[1] == "more than 4 files"


# -- the file copier: no symlink is followed -------------------------------------------------------------


def test_the_copier_follows_no_symlink_and_refuses_what_it_cannot_read_whole(tmp_path):
    root = tmp_path / "box"
    (root / "workspace" / "sub").mkdir(parents=True)
    (root / "egym" / "secrets").mkdir(parents=True)
    (root / "egym" / "secrets" / "token").write_text("admin-token")
    (root / "workspace" / "sub" / "a.txt").write_text("hello")
    (root / "workspace" / "big.txt").write_bytes(b"x" * 100)
    (root / "workspace" / "egym").symlink_to("/egym")  # absolute: inside the box it means box/egym
    (root / "workspace" / "up").symlink_to(root / "egym")
    (root / "workspace" / "link.txt").symlink_to("sub/a.txt")
    os.mkfifo(root / "workspace" / "fifo")
    pairs = [
        (f"/workspace/{name}", f"/grader/{i}")
        for i, name in enumerate(
            [
                "sub/a.txt",
                "egym/secrets/token",
                "up/secrets/token",
                "link.txt",
                "fifo",
                "sub",
                "none",
                "big.txt",
            ]
        )
    ]
    answer = safe_copy.copy_all(pairs, 50, str(root))
    assert answer["/workspace/sub/a.txt"] == {"copied": 5}
    assert (root / "grader" / "0").read_text() == "hello"
    for name in ("egym/secrets/token", "up/secrets/token", "link.txt", "fifo", "sub", "none"):
        assert "absent" in answer[f"/workspace/{name}"], name
    assert "symlink" in answer["/workspace/egym/secrets/token"]["absent"]
    assert "over the grader's 50-byte limit" in answer["/workspace/big.txt"]["refused"]
    assert sorted(p.name for p in (root / "grader").iterdir()) == ["0"]  # no secret was copied


# -- document bombs: "too large" before LibreOffice sees them --------------------------------------------


def _zip(path: Path, parts: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return path


def _sheet(rows: int, width: int) -> bytes:
    row = b"<x:row>" + b"<x:c><x:v>1</x:v></x:c>" * width + b"</x:row>"
    return b'<x:worksheet xmlns:x="urn:x"><x:sheetData>' + row * rows + b"</x:sheetData></x:worksheet>"


@pytest.mark.parametrize(
    "name, parts, why",
    [
        ("bomb.xlsx", {"xl/worksheets/sheet1.xml": b"<a/>" + b" " * (65 << 20)}, "bytes unpacked"),
        ("cells.xlsx", {"xl/worksheets/sheet1.xml": _sheet(10_001, 100)}, "more than 1,000,000 cells"),
        (
            "rows.ods",
            {
                "content.xml": b'<t:table-row t:number-rows-repeated="1048576">'
                b'<t:table-cell o:value-type="float" t:number-columns-repeated="1024"/></t:table-row>'
            },
            "more than 1,000,000 cells",
        ),
        (
            "spaces.odt",
            {"content.xml": b'<text:p><text:s text:c="99999999"/></text:p>'},
            "characters of spaces",
        ),
        ("long.docx", {"word/document.xml": b"<w:p/>" * 100_001}, "more than 100,000 paragraphs"),
    ],
)
def test_document_bombs_are_too_large_before_libreoffice_opens_them(tmp_path, name, parts, why):
    path = _zip(tmp_path / name, parts)
    started = time.monotonic()
    with pytest.raises(bounds.TooLarge, match=f"^too large: {name} holds .*{why}"):
        bounds.check(path)
    assert time.monotonic() - started < 5


def test_ordinary_documents_pass_the_bounds(tmp_path):
    empty_rows = (
        b'<t:table-row t:number-rows-repeated="1048575"><t:table-cell t:number-columns-repeated="1024"/>'
        b"</t:table-row>"
    )  # LibreOffice pads every sheet like this
    bounds.check(_zip(tmp_path / "ok.ods", {"content.xml": empty_rows}))
    bounds.check(_zip(tmp_path / "ok.xlsx", {"xl/worksheets/sheet1.xml": _sheet(100, 20)}))
    (tmp_path / "ok.csv").write_text("a,b\n1,2\n")
    bounds.check(tmp_path / "ok.csv")
    (tmp_path / "bad.xlsx").write_bytes(b"not a zip")
    bounds.check(tmp_path / "bad.xlsx")  # LibreOffice says what is wrong with it


# -- lint refuses absurd rubric input, one line each -------------------------------------------------------


def _write(folder: Path, name: str, items: list) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"task": f"acme/{name}", "items": items}, indent=1))
    return path


def _id_line(path: Path) -> int:
    """The line of the first item's "id": where lint locates the item's problems."""
    return path.read_text().split('"id"')[0].count("\n") + 1


def _errors(path: Path) -> list[str]:
    report = LintReport()
    lint_rubric(path, report)
    return [str(p) for p in report.problems]


def test_lint_refuses_a_foreach_over_the_bound_quickly(tmp_path):
    item = {
        **py_item(
            "paid-{{n}}",
            "sql.row_exists",
            1,
            args={"query": "SELECT 1 WHERE %(n)s > 0", "params": {"n": "{{n}}"}},
        ),
        "foreach": {"values": list(range(200_000)), "as": "n"},
    }
    path = _write(tmp_path, "huge", [item])
    started = time.monotonic()
    errors = _errors(path)
    assert time.monotonic() - started < 10
    assert errors == [
        f"{path}:{_id_line(path)}: $.items[0].foreach: expands to 200,000 items, over the most a foreach may "
        f"({MAX_FOREACH:,}): split the rubric or check the values in one item"
    ]
    fine = {**item, "foreach": {"values": list(range(MAX_FOREACH)), "as": "n"}}
    assert not [e for e in _errors(_write(tmp_path, "fine", [fine])) if "foreach" in e]


@pytest.mark.parametrize("pattern", [r"^(a|a)*$", r"(a+)+b", r"(\w+\s?)*$", r"(.|\s)*x"])
def test_lint_refuses_a_pattern_that_backtracks_catastrophically(tmp_path, pattern):
    item = py_item("answer", "transcript.final_answer_contains", 2, args={"regex": pattern})
    (error,) = _errors(_write(tmp_path, "regex", [item]))
    path = tmp_path / "regex.json"
    assert error.startswith(f"{path}:{_id_line(path)}: $.items[0].args.regex: {pattern!r} can backtrack")
    assert "\n" not in error


def test_patterns_the_rubrics_use_are_not_refused():
    for pattern in (r"deals[\s\S]*Lukas Meyer", r"(\d+,)*\d+", r"\bINV-\d{4}\b", r"(?:paid|open)+", r"SUM\("):
        assert catastrophic(pattern) is None, pattern


def test_lint_refuses_a_prompt_over_the_bound(tmp_path):
    folder = tmp_path / "tasks" / "acme" / "big-prompt"
    folder.mkdir(parents=True)
    prompt = "Please read this. " * 60_000  # about 1 MB
    (folder / "task.yaml").write_text(
        "id: big-prompt\ntitle: Big\nworld: acme\n" + "prompt: " + json.dumps(prompt) + "\n"
    )
    report = lint([folder / "task.yaml"])
    refused = [str(p) for p in report.problems if p.path == "$.prompt"]
    assert refused == [
        f"{folder / 'task.yaml'}:4: $.prompt: the prompt has {len(prompt.encode()):,} bytes, over the most a "
        f"prompt may have ({MAX_PROMPT_BYTES >> 10} KB): give the agent the data as files in its workspace instead"
    ]


def test_egym_lint_refuses_them_as_a_process_without_a_traceback(tmp_path):
    import subprocess
    import sys

    item = py_item("answer", "transcript.final_answer_contains", 2, args={"regex": r"(a+)+"})
    path = _write(tmp_path, "regex", [item])
    proc = subprocess.run(
        [sys.executable, "-c", "from gym.cli import main; main()", "lint", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert (
        f"{path}:{_id_line(path)}: $.items[0].args.regex: '(a+)+' can backtrack catastrophically"
        in proc.stdout
    )


# -- SQL a check runs is read-only -------------------------------------------------------------------------


@pytest.mark.docker
def test_sql_through_the_probe_cannot_write(live_sandbox):
    sandbox = live_sandbox(sql="create table t(id int primary key, v text); insert into t values (1, 'a');")
    with SandboxProbe(sandbox) as probe:
        for query in (
            "UPDATE t SET v = 'b' RETURNING v",
            "WITH x AS (UPDATE t SET v = 'b' RETURNING v) SELECT * FROM x",
            # Out of the wrapping subquery, switch the session to read-write, then write.
            "SELECT 1) q; SET default_transaction_read_only = off; UPDATE t SET v = 'b'; SELECT (1",
            "SELECT 1) q; BEGIN READ WRITE; UPDATE t SET v = 'b'; COMMIT; SELECT (1",
        ):
            with pytest.raises(StateError):
                rows = probe.sql(query)
                raise AssertionError(f"{query!r} answered {rows}")
        assert probe.sql("SELECT v FROM t") == [{"v": "a"}]
        # Two layers: a read-only transaction, and a role that may not write even when told otherwise.
        fresh = SandboxProbe(sandbox)
        assert fresh.sql(
            "SELECT current_setting('transaction_read_only') AS ro, has_table_privilege('t', 'UPDATE') AS up"
        ) == [{"ro": "on", "up": False}]
        fresh.close()
