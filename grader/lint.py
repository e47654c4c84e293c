"""Rubric lint without starting anything (`egym lint` runs it with gym.lint's task checks).

Errors: schema, unique ids, a positive total, checks that import, args that fit
the check's signature, placeholders that are bound (for literal expansions), and
a task for every rubric. Warnings (accepted, but probably not meant): a penalty
without `baseline_ok`, a gate worth points, a `{{slot}}` in an item without
`foreach` (used literally), a regular expression that does not compile, a
final-answer regex that matches a bare number (any answer listing numbers
passes it) or, in any case, a common short word (`\bIT\b` for Italy passes "I did it"),
and the scoring holes of grader.lint_holes (answers without precision, penalties
that never fire, a success claim that scores).
Refused as absurd (errors, grader.lint_limits): a foreach over 10,000 items and a regular
expression that can backtrack catastrophically.
Rubric problems carry the line of their item's `"id"`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import RubricError
from grader.checks import resolve, signature_problem
from grader.expand import PLACEHOLDER, expand_item
from grader.lint_holes import holes
from grader.lint_limits import limit_problems
from grader.loader import Problem, check_rubric
from grader.rubric import Item, PythonItem, Rubric

_ITEM_PATH = re.compile(r"^\$\.items\[(\d+)\]")
# A regex that, anchors and word boundaries aside, is just a number: "\b15\b", "^1,200$".
_BARE_NUMBER = re.compile(r"^[\\b^$\s(?:)]*[-+]?[\d.,]+[\\b^$\s)]*$")
# Words any answer may hold mid-sentence; a code matched in any case (IT, IN, NO, US) passes on them.
_COMMON_WORDS = ("a", "an", "as", "at", "be", "by", "do", "go", "he", "id", "if", "in", "is", "it", "me")
_COMMON_WORDS += ("my", "no", "of", "ok", "on", "or", "so", "to", "up", "us", "we")


@dataclass
class LintReport:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    tasks: int = 0
    rubrics: int = 0
    items: int = 0
    points: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def _item_problems(rubric: Rubric, index: int, file: str) -> list[Problem]:
    item = rubric.items[index]
    where = f"$.items[{index}]"
    if item.foreach is not None and item.foreach.initial_query is None:
        try:
            concrete = expand_item(rubric, index)
        except RubricError as exc:
            return [Problem(file, f"{where}.foreach", str(exc).split(": ", 1)[-1])]
        if not concrete:
            return [Problem(file, f"{where}.foreach", "expands to no items")]
    else:
        concrete = [item]
    if not isinstance(item, PythonItem):
        return []
    try:
        fn = resolve(item.check, near=rubric.path)
    except RubricError as exc:
        return [Problem(file, f"{where}.check", str(exc))]
    for instance in concrete:
        problem = signature_problem(fn, instance.args)
        if problem:
            return [Problem(file, f"{where}.args", f"{item.check}: {problem}")]
    return []


def _regexes(args: Any) -> list[tuple[str, Any]]:
    """(argument name, pattern) for every argument that holds a regular expression."""
    found = []
    for name, value in args.items() if isinstance(args, dict) else ():
        if name.endswith(("regex", "pattern")):
            found.append((name, value))
        elif name.endswith(("regexes", "patterns")) and isinstance(value, list):
            found += [(name, v) for v in value]
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _item_warnings(item: Item, concrete: list[Item], where: str, file: str) -> list[Problem]:
    def warn(path: str, message: str) -> Problem:
        return Problem(file, f"{where}{path}", message, severity="warning")

    out = []
    if item.points < 0 and not item.baseline_ok:
        out.append(
            warn(
                ".baseline_ok",
                "a penalty without baseline_ok: say it passes on the untouched state (with a reason)",
            )
        )
    if item.gate and item.points != 0:
        out.append(
            warn(
                ".points", f"a gate worth {item.points} points: a failed gate zeroes the grade, so make it 0"
            )
        )
    if item.foreach is None:
        slots = sorted(
            {m for text in _strings(item.model_dump(mode="json")) for m in PLACEHOLDER.findall(text)}
        )
        if slots:
            out.append(warn("", f"{{{{{slots[0]}}}}} is used literally: this item has no foreach"))
    if isinstance(item, PythonItem):
        text = item.args.get("text")
        answer_check = item.check == "transcript.final_answer_contains" and item.points > 0
        if answer_check and isinstance(text, str) and re.fullmatch(r"\s*[-+]?[\d.,]+\s*", text):
            out.append(
                warn(".args.text", f"{text!r} is a bare number: an answer that lists many numbers passes it")
            )
        for instance in concrete:
            for name, pattern in _regexes(instance.args):
                if not isinstance(pattern, str) or (item.foreach and PLACEHOLDER.search(pattern)):
                    continue
                try:
                    re.compile(pattern)
                except re.error as exc:
                    out.append(warn(f".args.{name}", f"invalid regular expression {pattern!r}: {exc}"))
                    return out
                if (
                    item.check == "transcript.final_answer_contains"
                    and item.points > 0
                    and _BARE_NUMBER.match(pattern)
                ):
                    out.append(
                        warn(
                            f".args.{name}",
                            f"{pattern!r} matches a bare number: an answer that lists many numbers passes it; "
                            "match the number with its label (e.g. 'breaches\\D{0,20}15')",
                        )
                    )
                    return out
                word = _common_word(item, pattern)
                if word:
                    out.append(
                        warn(
                            f".args.{name}",
                            f"{pattern!r} matches the word {word!r} in any case: an answer that says "
                            f"{word!r} passes it; match a code in capitals (case_sensitive: true), a word with its context",
                        )
                    )
    return out


def _common_word(item: PythonItem, pattern: str) -> str | None:
    """The common word a case-insensitive final-answer item matches mid-sentence, if any (a code such as IT)."""
    if (
        item.check != "transcript.final_answer_contains"
        or item.points <= 0
        or item.args.get("case_sensitive")
    ):
        return None
    compiled = re.compile(pattern, re.IGNORECASE)
    return next((w for w in _COMMON_WORDS if compiled.search(f"Done, {w} checked.")), None)


# A JSON string (with the colon after it when it is a key) or a bracket; everything else is skipped.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?|[{}\[\]]')


def _item_id_offsets(text: str) -> list[int | None]:
    """For each object in the top-level "items" array, the offset of its own "id" key (nested ids ignored)."""
    offsets: list[int | None] = []
    depth, top_key, in_items = 0, None, False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group(0)
        if token in ("{", "["):
            depth += 1
            in_items = in_items or (depth == 2 and token == "[" and top_key == "items")
            if depth == 3 and in_items and token == "{":
                offsets.append(None)
        elif token in ("}", "]"):
            in_items = in_items and depth != 2
            depth -= 1
        elif match.group(1) and depth == 1:
            top_key = json.loads(token[: match.start(1) - match.start()])
        elif match.group(1) and depth == 3 and in_items and token.startswith('"id"') and offsets[-1] is None:
            offsets[-1] = match.start()
    return offsets


def _item_lines(text: str) -> list[int | None]:
    """The line of each item's `"id"` key ([] when the file is not JSON with an items list of objects)."""
    try:
        items = json.loads(text).get("items")
    except (ValueError, RecursionError, AttributeError):
        return []
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        return []
    offsets = _item_id_offsets(text)
    if len(offsets) != len(items):
        return []  # e.g. a repeated "items" key: json.loads kept the last one
    lines: list[int | None] = []
    previous, line = 0, 1
    for offset in offsets:
        if offset is None:
            lines.append(None)
            continue
        # Counted from the previous id, not from the top: linear in the file, even for 200,000 items.
        line += text.count("\n", previous, offset)
        previous = offset
        lines.append(line)
    return lines


def _located(problems: list[Problem], lines: list[int | None]) -> list[Problem]:
    out = []
    for problem in problems:
        match = _ITEM_PATH.match(problem.path)
        line = lines[int(match.group(1))] if match and int(match.group(1)) < len(lines) else None
        out.append(dataclasses.replace(problem, line=line) if line and not problem.line else problem)
    return out


def _concrete(rubric: Rubric, index: int) -> list[Item]:
    item = rubric.items[index]
    # An initial_query foreach binds its slots only when grading: its texts are checked as written.
    if item.foreach is None or item.foreach.initial_query is not None:
        return [item]
    try:
        return expand_item(rubric, index)
    except RubricError:
        return []


def lint_rubric(file: Path, report: LintReport) -> None:
    report.rubrics += 1
    rubric, problems = check_rubric(file)
    try:
        lines = _item_lines(file.read_text(errors="replace"))
    except OSError:
        lines = []
    report.problems += _located(problems, lines)
    if rubric is None:
        return
    # Absurd input first (grader.lint_limits): an item whose foreach is over the bound is not expanded.
    refused, oversized = limit_problems(rubric, str(file))
    report.problems += _located(refused, lines)
    for index, item in enumerate(rubric.items):
        if index in oversized:
            continue
        found = _item_problems(rubric, index, str(file))
        report.problems += _located(found, lines)
        warnings = _item_warnings(item, _concrete(rubric, index), f"$.items[{index}]", str(file))
        report.warnings += _located(warnings, lines)
    report.warnings += _located(holes(rubric, str(file)), lines)
    expanded: dict[str, int] = {}
    for index, item in enumerate(rubric.items):
        if index in oversized:
            continue
        if item.foreach is not None and item.foreach.initial_query is not None:
            report.items += 1
            continue
        try:
            concrete = expand_item(rubric, index)
        except RubricError:
            continue
        for c in concrete:
            other = expanded.get(c.id)
            # Plain duplicates were reported by the loader; here: ids that only collide after expansion.
            if other is not None and (item.foreach or rubric.items[other].foreach):
                report.problems.append(
                    Problem(
                        str(file),
                        f"$.items[{index}].id",
                        f"expands to id {c.id!r}, already used by $.items[{other}]",
                        line=lines[index] if index < len(lines) else None,
                    )
                )
            expanded.setdefault(c.id, index)
            report.items += 1
            report.points += max(c.points, 0)
    _rubric_has_task(file, rubric, report)


def _rubric_has_task(file: Path, rubric: Rubric, report: LintReport) -> None:
    parts = file.resolve().parts
    if len(parts) < 3 or parts[-3] != "rubrics":
        return
    tasks = Path(*parts[:-3]) / "tasks"
    world, _, task_id = rubric.task.partition("/")
    if tasks.is_dir() and not (tasks / world / task_id / "task.yaml").is_file():
        report.problems.append(
            Problem(
                str(file),
                "$.task",
                f"no task {rubric.task!r} (expected {tasks / world / task_id / 'task.yaml'})",
            )
        )
