"""Lint for scoring holes: ways a rubric pays for answers that did not do the work (warnings; errors under --strict).

- an answer item without precision: a positive item whose check matches text the agent
  wrote (the final answer, a post, a document) passes an answer listing every candidate;
  a `claims.stated` item charges the wrong values instead (grader.claims);
- a penalty pattern that can never match (`(?!x)x`): the penalty never fires;
- a success claim that earns points: a message that only says everything is done,
  approved, paid and verified, posted in every place the rubric reads, must not score.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from core.trajectory import Message, Trajectory
from grader import patterns
from grader.changes import Changes, PostChange
from grader.checks import resolve
from grader.claims import CHECK as CLAIM_CHECK
from grader.claims.channels import place
from grader.loader import Problem
from grader.probe import StaticProbe
from grader.rubric import Item, PythonItem, Rubric

SUCCESS_CLAIM = (
    "Done: everything is complete and approved, resolved, paid, sent, confirmed and verified. Yes, all OK."
)


def _warn(file: str, path: str, message: str) -> Problem:
    return Problem(file, path, message, severity="warning")


def _matches_text(item: PythonItem, rubric: Rubric) -> bool:
    try:
        marked = getattr(resolve(item.check, near=rubric.path), "__egym_matches_text__", False)
    except Exception:  # noqa: BLE001 - an unknown check is reported by the main lint
        return False
    if isinstance(marked, tuple):  # matches text only through these arguments (grader.checks.base)
        return any(item.args.get(name) is not None for name in marked)
    return bool(marked)


def imprecise_answers(rubric: Rubric, file: str) -> list[Problem]:
    """Positive items that reward matching text: an answer listing every candidate passes them."""
    return [
        _warn(
            file,
            f"$.items[{index}]",
            f"{item.check} rewards text the agent wrote without charging wrong values: an answer "
            "listing every candidate passes it; make it a claims.stated item (docs/rubrics.md#claims)",
        )
        for index, item in enumerate(rubric.items)
        if isinstance(item, PythonItem) and item.points > 0 and _matches_text(item, rubric)
    ]


# -- patterns that can never match ------------------------------------------------------------


def _witnesses(pattern: str, limit: int = 64) -> list[str] | None:
    """A few strings built from the pattern's parse tree (lookarounds ignored), or None when the
    parser cannot be read (`re._parser` is CPython's own: tests/grader/test_lint_holes.py fails
    loudly if it moves)."""
    try:
        from re import _parser as parser
    except ImportError:
        return None
    try:
        tree = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None

    def walk(nodes) -> Iterator[str]:
        outs = [""]
        for op, arg in nodes:
            name = str(op)
            if name == "LITERAL":
                options = [chr(arg)]
            elif name == "NOT_LITERAL":
                options = ["#" if arg != ord("#") else "@"]
            elif name == "ANY":
                options = ["x"]
            elif name == "IN":
                options = _members(arg)
            elif name == "BRANCH":
                options = [s for branch in arg[1] for s in walk(branch)][:4]
            elif name == "SUBPATTERN":
                options = list(walk(arg[-1]))[:4]
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, _high, body = arg
                inner = list(walk(body))[:2] or [""]
                options = [s * max(low, 0) for s in inner] + [s * max(low, 1) for s in inner]
            elif name == "CATEGORY":
                options = [_category(arg)]
            else:  # anchors, lookarounds, back references: the search decides
                options = [""]
            outs = [a + b for a in outs for b in options][:limit]
        yield from outs

    return list(walk(tree))[:limit]


def _category(category: Any) -> str:
    name = str(category)
    if "NOT_DIGIT" in name or "NOT_WORD" in name:
        return " "
    if "DIGIT" in name:
        return "1"
    if "WORD" in name:
        return "a"
    if "SPACE" in name:
        return " "
    return "a"


def _members(items: list) -> list[str]:
    """Characters that may be in a set: its first member, or for a negated set a few probes
    (the search decides which one the set admits)."""
    if items and str(items[0][0]) == "NEGATE":
        return ["a", "1", " ", "#", "_", "."]
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            return [chr(arg)]
        if name == "RANGE":
            return [chr(arg[0])]
        if name == "CATEGORY":
            return [_category(arg)]
    return ["a"]


def can_match(pattern: str) -> bool | None:
    """Whether some text matches `pattern`: True when a witness does, False when none of those
    built from the pattern (in a few contexts) does, None when it cannot tell."""
    witnesses = _witnesses(pattern)
    if witnesses is None:
        return None
    try:
        compiled = patterns.compiled(pattern, True)
    except patterns.error:
        return None  # reported as an invalid pattern by the main lint
    for witness in witnesses:
        for text in (witness, f" {witness} ", f"a {witness} 1", f"{witness}\n"):
            try:
                if compiled.search(text, timeout=0.1):
                    return True
            except TimeoutError:
                return None
    return False


def _penalty_patterns(item: Item) -> Iterator[tuple[str, str]]:
    if not isinstance(item, PythonItem) or not (item.points < 0 or item.negate):
        return
    for name, value in item.args.items():
        if name.endswith(("regex", "pattern")) and isinstance(value, str):
            yield name, value
        elif name in ("all_of", "regexes", "patterns") and isinstance(value, list):
            yield from ((name, v) for v in value if isinstance(v, str))


def unmatchable(rubric: Rubric, file: str) -> list[Problem]:
    """Penalty patterns (and claim kinds' patterns) that no text can match."""
    out = []
    for index, item in enumerate(rubric.items):
        for name, pattern in _penalty_patterns(item):
            if "{{" not in pattern and can_match(pattern) is False:
                out.append(
                    _warn(
                        file,
                        f"$.items[{index}].args.{name}",
                        f"the penalty pattern {pattern[:60]!r} can never match: the penalty never fires",
                    )
                )
    for kind_name, kind in rubric.claims.kinds.items():
        found = [kind.regex] if kind.regex else [e.regex for e in kind.entries() if e.regex]
        for pattern in found:
            if can_match(pattern) is False:
                out.append(
                    _warn(
                        file,
                        f"$.claims.kinds.{kind_name}",
                        f"the pattern {pattern[:60]!r} can never match: no value of the kind is ever read",
                    )
                )
    return out


# -- a message that only claims success ----------------------------------------------------------


def success_claim(rubric: Rubric, file: str) -> list[Problem]:
    """Grade a claim of success, written in every place the rubric reads, with the rubric's answer items."""
    from grader.score import grade

    if any(kind.values_query for kind in rubric.claims.kinds.values()):
        return []  # its lexicon needs the initial state; validate's cheats cover it
    answers = [
        item
        for item in rubric.items
        if isinstance(item, PythonItem)
        and item.foreach is None
        and (item.check == CLAIM_CHECK or (item.points > 0 and _matches_text(item, rubric)))
    ]
    if not answers:
        return []
    channels = {place(str(item.args.get("where", "answer"))) for item in answers}
    channels |= {f"#{item.args['channel']}" for item in answers if isinstance(item.args.get("channel"), str)}
    posts = [
        PostChange(f"claim-{i}", where.lstrip("#"), rubric.claims.author or "agent", "added", SUCCESS_CLAIM)
        for i, where in enumerate(sorted(c for c in channels if c.startswith(("#", "dm:"))))
    ]
    probe = StaticProbe(changes=Changes(posts=posts, sources=("chat",)))
    trajectory = Trajectory(
        task=rubric.task,
        policy="lint",
        final_answer=SUCCESS_CLAIM,
        messages=[Message(role="user", content="")],
    )
    test = rubric.model_copy(
        update={"items": answers, "damage": rubric.damage.model_copy(update={"points": 0})}
    )
    result = grade(test, probe, trajectory)
    if result.raw <= 0:
        return []
    passed = [i.id for i in result.items if i.status == "pass" and i.points > 0]
    return [
        _warn(
            file,
            "$.items",
            f"a message that only claims success ({SUCCESS_CLAIM[:40]}...) scores {result.raw:g}: "
            f"{', '.join(passed[:4])} pass on it; ask for what the claim cannot say (a value, a subject)",
        )
    ]


def holes(rubric: Rubric, file: str) -> list[Problem]:
    """Every scoring-hole warning for one rubric."""
    return imprecise_answers(rubric, file) + unmatchable(rubric, file) + success_claim(rubric, file)


# -- the task's own texts against its claim items (gym.lint) --------------------------------------


def _answer_claims(rubric: Rubric) -> list[PythonItem]:
    return [
        item
        for item in rubric.items
        if isinstance(item, PythonItem)
        and item.check == CLAIM_CHECK
        and item.foreach is None
        and item.points > 0
        and place(str(item.args.get("where", "answer"))) == "answer"
    ]


def reference_misses(rubric: Rubric, prompt: str, answer: str) -> list[str]:
    """What the reference answer loses on the final answer's claims: 'misses item X', 'trips claims.K (...)'."""
    from grader.score import grade

    items = _answer_claims(rubric)
    if not items or any(kind.values_query for kind in rubric.claims.kinds.values()):
        return []
    test = rubric.model_copy(
        update={"items": items, "damage": rubric.damage.model_copy(update={"points": 0})}
    )
    trajectory = Trajectory(
        task=rubric.task, policy="lint", final_answer=answer, messages=[Message(role="user", content=prompt)]
    )
    result = grade(test, StaticProbe(changes=Changes(sources=("chat",))), trajectory)
    out = [f"misses item {i.id!r}" for i in result.items if i.points > 0 and i.status != "pass"]
    out += [f"trips {i.id} ({i.evidence[:80]})" for i in result.items if i.points < 0 and i.status == "fail"]
    return out


def prompt_states(rubric: Rubric, prompt: str) -> list[tuple[str, str]]:
    """(item id, the text) for claim items whose value the prompt itself states: repeating the question earns them."""
    from grader.claims.extract import extract_line, fold, normalize, same

    if any(kind.values_query for kind in rubric.claims.kinds.values()):
        return []
    found = [f for line in prompt.splitlines() for f in extract_line(rubric.claims.kinds, fold(line))]
    out = []
    for item in rubric.items:
        if not isinstance(item, PythonItem) or item.check != CLAIM_CHECK or item.points <= 0:
            continue
        kind = rubric.claims.kinds.get(item.args.get("kind", ""))
        if kind is None or item.foreach is not None:
            continue
        try:
            wanted = normalize(kind, item.args.get("value"))
        except (TypeError, ValueError):
            continue
        hit = next((f for f in found if f.kind == item.args["kind"] and same(kind, f.value, wanted)), None)
        if hit is not None:
            out.append((item.id, hit.text))
    return out
