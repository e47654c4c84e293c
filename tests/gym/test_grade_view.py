"""How a grade prints: small ones in full, big ones as sections and what did not pass, worst first."""

from __future__ import annotations

from rich.console import Console

from grader.grade import Grade, ItemResult
from gym.batch.view import grade_view


def _grade(n: int, failing: set[int] = frozenset(), errors: set[int] = frozenset()) -> Grade:
    items = [
        ItemResult(
            id=f"item-{i}",
            section=f"s{i % 3}",
            points=1 + i % 5,
            status="error" if i in errors else "fail" if i in failing else "pass",
            earned=0.0 if i in failing | errors else float(1 + i % 5),
            error="check timed out" if i in errors else None,
        )
        for i in range(n)
    ]
    earned = sum(i.earned for i in items)
    possible = sum(i.points for i in items)
    return Grade(task="w/t", earned=earned, possible=possible, normalized=earned / possible, items=items)


def _text(renderable) -> str:
    console = Console(record=True, width=160, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_small_grade_prints_every_item():
    text = _text(grade_view(_grade(5, failing={2})))
    assert all(f"item-{i}" in text for i in range(5))


def test_a_big_grade_prints_sections_and_the_worst_items_only():
    failing = set(range(0, 200_000, 1000))
    big = _grade(200_000, failing=failing, errors={7})
    text = _text(grade_view(big))
    lines = text.splitlines()
    assert len(lines) < 100
    assert "sections" in text and "s0" in text and "s2" in text
    first = next(line for line in lines if "item-" in line)
    assert "item-7" in first and "error" in first  # errors come first
    assert f"… {len(failing) + 1 - 30} more not passing; {200_000 - len(failing) - 1} passing" in text
    assert "--items shows all 200000 items" in text


def test_items_asks_for_the_full_table_and_was_marks_changes():
    old = _grade(40)
    new = _grade(40, failing={3})
    text = _text(grade_view(new, items=True, was=old))
    assert all(f"item-{i} " in text for i in range(40))
    assert "fail (was pass)" in text
