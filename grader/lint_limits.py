"""Rubric input `egym lint` refuses as absurd: errors, because grading it would fail or hang.

- A `foreach` that expands to more than MAX_FOREACH items. Every concrete item runs a
  check (and is stored, shown, judged); 10,000 is far past any task's need (the largest
  expands to tens) while a 200,000-value list is a generator's slip that makes every
  item run out of the grade's time budget. Foreach over `initial_query` expands only
  when grading (against the initial state) and is not counted here.
- A regular expression with nested unbounded quantifiers: `(a+)+`, `(\\w+\\s?)*`,
  `(a|a)*`, `(.|\\s)*`. Run on a long text the agent wrote, such a pattern backtracks
  for minutes (grader.patterns stops it after a second and fails the item; the author
  meant something else). See `catastrophic` for what the check looks at and its limits.

The prompt's size is a task's (task.yaml), checked by gym.lint.
"""

from __future__ import annotations

import re
from re import _constants as sre  # the parser's opcodes: stable since Python 3.11 (re._parser)
from re import _parser as sre_parse
from typing import Any

from core.errors import RubricError
from grader.expand import PLACEHOLDER, bindings
from grader.loader import Problem
from grader.rubric import PythonItem, Rubric

MAX_FOREACH = 10_000

__all__ = ["MAX_FOREACH", "catastrophic", "limit_problems"]


def limit_problems(rubric: Rubric, file: str) -> tuple[list[Problem], set[int]]:
    """(errors, indices of items whose foreach is over MAX_FOREACH: lint must not expand them)."""
    problems: list[Problem] = []
    oversized: set[int] = set()
    for index, item in enumerate(rubric.items):
        where = f"$.items[{index}]"
        if item.foreach is not None and item.foreach.initial_query is None:
            try:
                count = len(bindings(rubric, index))
            except RubricError:
                count = 0  # lint_rubric reports the unreadable values
            if count > MAX_FOREACH:
                oversized.add(index)
                problems.append(
                    Problem(
                        file,
                        f"{where}.foreach",
                        f"expands to {count:,} items, over the most a foreach may ({MAX_FOREACH:,}): "
                        "split the rubric or check the values in one item",
                    )
                )
        if isinstance(item, PythonItem):
            for path, pattern in _patterns(item.args, f"{where}.args"):
                problems += _pattern_problem(file, path, pattern)
    for name, kind in rubric.claims.kinds.items():
        where = f"$.claims.kinds.{name}"
        found = [(f"{where}.regex", kind.regex), (f"{where}.noun", kind.noun)]
        found += [
            (f"{where}.values[{i}].regex", entry.regex)
            for i, entry in enumerate(kind.values or [])
            if not isinstance(entry, str)
        ]
        for path, pattern in found:
            problems += _pattern_problem(file, path, pattern)
    return problems, oversized


def _patterns(args: Any, where: str) -> list[tuple[str, str]]:
    """(JSON path, pattern) of every argument holding a regular expression (or a list of them)."""
    found = []
    for name, value in args.items() if isinstance(args, dict) else ():
        if name.endswith(("regex", "pattern")) and isinstance(value, str):
            found.append((f"{where}.{name}", value))
        elif name.endswith(("regexes", "patterns")) or name == "all_of":
            found += [(f"{where}.{name}[{i}]", v) for i, v in enumerate(value or []) if isinstance(v, str)]
    return found


def _pattern_problem(file: str, path: str, pattern: str | None) -> list[Problem]:
    if not pattern:
        return []
    why = catastrophic(PLACEHOLDER.sub("x", pattern))
    if why is None:
        return []
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return [
        Problem(
            file,
            path,
            f"{shown!r} can backtrack catastrophically ({why}): on a long text it runs for minutes; "
            "make the repeated part match each character one way only",
        )
    ]


# -- the structural check ------------------------------------------------------------
#
# It parses the pattern (Python's own parser, the syntax grader.patterns runs) and looks
# at every unbounded repeat (`*`, `+`, `{n,}`, greedy or lazy; possessive ones and atomic
# groups do not backtrack and are left alone). It flags:
#
# 1. nesting: the repeated part holds another unbounded repeat and everything else in it
#    may match nothing (or is itself unbounded): `(a+)+`, `(\w+\s?)*`, `(x+x+)+`, `(?:a+|b)*`.
#    `(\d+,)*` is not flagged: the comma ends each round, so there is one way to split.
# 2. overlapping alternatives: the repeated part is an alternation with two identical
#    alternatives, or two one-character alternatives that share a character: `(a|a)*`,
#    `(\w|\d)+`, `(.|\s)*`. Characters are compared on a sample (ASCII and a few others).
#
# Its limits: it does not prove anything. It misses overlaps it cannot see structurally
# (`(a+a)+`, `(ab|a)*b`, adjacent `\w*\w*\w*`, back-references) and may flag a nested
# repeat whose rounds cannot actually overlap for reasons of content (`(a+b?)+` on text
# without b is slow; `(a+[^a]?)+` is not). The runtime limit in grader.patterns stays
# the guarantee; this check only catches the common mistakes before a grade does.

_UNBOUNDED = (sre.MAX_REPEAT, sre.MIN_REPEAT)
_SAMPLE = [chr(c) for c in range(128)] + ["é", "ß", "€", "\u00a0", "中"]


def catastrophic(pattern: str) -> str | None:
    """Why `pattern` may backtrack catastrophically (one short phrase), or None."""
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None  # lint_rubric warns about a pattern that does not compile
    try:
        return _scan(list(tree)) or _repeated_alternations(pattern)
    except RecursionError:
        return "nested too deeply to analyse"


def _scan(items: list) -> str | None:
    for op, av in items:
        if op in _UNBOUNDED and av[1] == sre.MAXREPEAT:
            body = _flat(list(av[2]))
            if why := _nested(body) or _overlapping(body):
                return why
        for child in _children(op, av):
            if why := _scan(child):
                return why
    return None


def _children(op, av) -> list[list]:
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return [list(av[2])]
    if op is sre.SUBPATTERN:
        return [list(av[3])]
    if op is sre.BRANCH:
        return [list(alt) for alt in av[1]]
    if op is sre.ATOMIC_GROUP:
        return [list(av)]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [list(av[1])]
    if op is sre.GROUPREF_EXISTS:
        return [list(p) for p in av[1:] if p is not None]
    return []


def _flat(items: list) -> list:
    """A sequence with its groups opened (a group is transparent to how a sequence splits)."""
    out = []
    for op, av in items:
        if op is sre.SUBPATTERN:
            out += _flat(list(av[3]))
        else:
            out.append((op, av))
    return out


def _unbounded_inside(op, av) -> bool:
    if op in _UNBOUNDED and av[1] == sre.MAXREPEAT:
        return True
    if op in (sre.ATOMIC_GROUP, sre.POSSESSIVE_REPEAT, sre.ASSERT, sre.ASSERT_NOT):
        return False  # no backtracking into it (assertions match no text)
    return any(_unbounded_inside(o, a) for child in _children(op, av) for o, a in child)


def _min_width(item) -> int:
    return sre_parse.SubPattern(sre_parse.State(), [item]).getwidth()[0]


def _nested(body: list) -> str | None:
    inner = [item for item in body if _unbounded_inside(*item)]
    if not inner:
        return None
    rest = [item for item in body if item not in inner]
    if all(_min_width(item) == 0 for item in rest):
        return "an unbounded repeat inside an unbounded repeat"
    return None


def _overlapping(body: list) -> str | None:
    if len(body) != 1 or body[0][0] is not sre.BRANCH:
        return None
    alternatives = [_flat(list(alt)) for alt in body[0][1][1]]
    for i, a in enumerate(alternatives):
        for b in alternatives[i + 1 :]:
            if a == b:
                return "two identical alternatives inside an unbounded repeat"
            if _one_char(a) and _one_char(b) and any(_char(a[0], c) and _char(b[0], c) for c in _SAMPLE):
                return "alternatives inside an unbounded repeat that match the same character"
    return None


def _one_char(alt: list) -> bool:
    return len(alt) == 1 and alt[0][0] in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN)


# Python's parser turns `(a|a)` into the set `[a]` (harmless for `re`, but grader.patterns runs
# the `regex` module, which tries both), so alternations of single characters are read from the
# pattern's text: a group followed by an unbounded quantifier, split at its top-level `|`.
_QUANTIFIER = re.compile(r"(?:[*+]|\{\d*,\})(?![+])")
_GROUP_PREFIX = re.compile(r"^\?(?:[:>]|P<\w+>|<\w+>|[aiLmsux-]+:)?")


def _repeated_alternations(pattern: str) -> str | None:
    for body in _repeated_groups(pattern):
        alternatives = _split_alternatives(_GROUP_PREFIX.sub("", body, count=1))
        for i, a in enumerate(alternatives):
            for b in alternatives[i + 1 :]:
                if a == b:
                    return "two identical alternatives inside an unbounded repeat"
                if _shared_char(a, b):
                    return "alternatives inside an unbounded repeat that match the same character"
    return None


def _repeated_groups(pattern: str) -> list[str]:
    """The text inside every group that an unbounded quantifier repeats."""
    found, starts, i, in_class = [], [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            i += 2 if pattern[i + 1 : i + 2] in ("]", "^") else 1  # `[]...]` and `[^]...]`
            continue
        elif ch == "(":
            starts.append(i + 1)
        elif ch == ")" and starts:
            start = starts.pop()
            if _QUANTIFIER.match(pattern, i + 1):
                found.append(pattern[start:i])
        i += 1
    return found


def _split_alternatives(body: str) -> list[str]:
    out, depth, in_class, current, i = [], 0, False, "", 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            current += body[i : i + 2]
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(current)
            current = ""
            i += 1
            continue
        current += ch
        i += 1
    return [*out, current]


def _shared_char(a: str, b: str) -> bool:
    """Whether two alternatives are each one character wide and match a common character."""
    try:
        first, second = re.compile(a), re.compile(b)
    except re.error:
        return False
    if any(sre_parse.parse(x).getwidth() != (1, 1) for x in (a, b)):
        return False
    return any(first.fullmatch(c) and second.fullmatch(c) for c in _SAMPLE)


_CATEGORIES = {
    sre.CATEGORY_DIGIT: str.isdigit,
    sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
    sre.CATEGORY_SPACE: str.isspace,
    sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    sre.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
}


def _char(item, c: str) -> bool:
    """Whether a one-character item matches `c` (case as written; unknown parts count as a match)."""
    op, av = item
    if op is sre.LITERAL:
        return ord(c) == av
    if op is sre.NOT_LITERAL:
        return ord(c) != av
    if op is sre.ANY:
        return c != "\n"
    hit, negate = False, False
    for kind, value in av:  # IN
        if kind is sre.NEGATE:
            negate = True
        elif kind is sre.LITERAL:
            hit = hit or ord(c) == value
        elif kind is sre.RANGE:
            hit = hit or value[0] <= ord(c) <= value[1]
        elif kind is sre.CATEGORY:
            hit = hit or _CATEGORIES.get(value, lambda _: True)(c)
        else:
            hit = True
    return hit != negate
