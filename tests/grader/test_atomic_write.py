"""core.files.write_text_atomic: threads of one process filling the same cache entry at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from core.files import write_text_atomic


def test_threads_writing_one_path_at_once_all_succeed_and_leave_one_whole_file(tmp_path):
    path = tmp_path / "entry.json"
    texts = [f'{{"writer": {i}, "pad": "{"x" * 4096}"}}' for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(lambda t: [write_text_atomic(path, t) for _ in range(50)], texts)
        )  # raises on a lost rename
    assert path.read_text() in texts
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]  # no temporary left behind
