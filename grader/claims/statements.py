"""What the agent asserted, and which of it is right: one object per grade, shared by its claim items.

Each value of a declared kind found in the agent's writing is a statement. When the
kind's items say what a value is about (`about`: a customer, a priority), a statement is
attributed to the nearest of those subjects on its line ("Globex: 12,300.00",
"2 urgent, 5 high"), so a dump that lines every value up with every name does not make
each value right for each name.

A statement is right when an item of its kind expects that value, about that subject,
in that place (the final answer is always a right place: it goes to whoever asked);
neutral when the prompt already holds the value (or the kind allows it); otherwise it
is wrong, and wrong values are what the claims section charges (grader.claims.section).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader import patterns
from grader.claims import channels
from grader.claims.extract import Found, extract_line, fold, normalize, same, whole_word
from grader.errors import StateError
from grader.rubric import ClaimKind, Claims, PythonItem

CHECK = "claims.stated"
# Words that claim success. A lexicon holding one of them (a status 'approved', 'paid', 'resolved')
# holds them all: "Done, approved, completed and verified" then asserts several values of the kind
# and is charged, instead of passing on the one word it happens to share with the answer.
SUCCESS_WORDS = ("done", "complete", "completed", "finished", "approved", "accepted", "confirmed")
SUCCESS_WORDS += ("verified", "resolved", "fixed", "paid", "sent", "processed", "closed", "success")
SUCCESS_WORDS += ("successful", "granted", "ok", "okay", "yes")


def added_words(kind: ClaimKind, original: ClaimKind) -> set[str]:
    """The success words `widened` added to a kind (none for a kind it left alone)."""
    return {fold(e.value).casefold() for e in kind.entries()} - {
        fold(e.value).casefold() for e in original.entries()
    }


def widened(kind: ClaimKind) -> ClaimKind:
    """A lexicon kind with the success words added when it holds any of them (as a value, or as a
    spelling an entry's pattern accepts)."""
    if kind.values is None:
        return kind
    held = {fold(e.value).casefold() for e in kind.entries()}
    spelled = any(
        patterns.search(e.regex, word, ignore_case=True)
        for e in kind.entries()
        if e.regex
        for word in SUCCESS_WORDS
    )
    if not (held & set(SUCCESS_WORDS) or spelled):
        return kind
    return kind.model_copy(update={"values": [*kind.values, *(w for w in SUCCESS_WORDS if w not in held)]})


@dataclass(frozen=True)
class Expected:
    """One claim item: the value it expects, where, and about what."""

    item_id: str
    kind: str
    value: Any
    where: str
    about: str | None
    points: int
    tolerance: float | None = None


@dataclass(frozen=True)
class Statement:
    found: Found
    place: str
    about: str | None  # the subject it is attributed to, if the kind's items name subjects


@dataclass
class Statements:
    """Every statement of the agent, with what is expected of it."""

    kinds: dict[str, ClaimKind]
    expected: list[Expected]
    statements: list[Statement] = field(default_factory=list)
    neutral: dict[str, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what could not be read, for the evidence
    # Per lexicon kind, the success words it holds only because it was widened: charged where the
    # agent also asserts a value of the kind ("Done: approved, completed"), not in a bare "Done".
    success_words: dict[str, set[str]] = field(default_factory=dict)

    # -- items -------------------------------------------------------------------------------

    def right_for(self, expected: Expected, statement: Statement) -> bool:
        kind = self.kinds[expected.kind]
        return (
            statement.found.kind == expected.kind
            and same(kind, statement.found.value, expected.value, expected.tolerance)
            and (expected.about is None or statement.about == expected.about)
        )

    def stated(self, expected: Expected) -> Statement | None:
        """The statement that earns `expected`: its value, about its subject, in its place."""
        return next(
            (s for s in self.statements if s.place == expected.where and self.right_for(expected, s)), None
        )

    def said(self, kind: str, place: str) -> list[Statement]:
        return [s for s in self.statements if s.found.kind == kind and s.place == place]

    # -- charges -----------------------------------------------------------------------------

    def is_neutral(self, statement: Statement) -> bool:
        kind = self.kinds[statement.found.kind]
        return any(same(kind, statement.found.value, v) for v in self.neutral.get(statement.found.kind, []))

    def is_right(self, statement: Statement) -> bool:
        return any(
            self.right_for(e, statement) and statement.place in (e.where, channels.ANSWER)
            for e in self.expected
        )

    @staticmethod
    def _folded(statement: Statement) -> str:
        return fold(str(statement.found.value)).casefold()

    def wrong(self, kind: str) -> list[Statement]:
        """The kind's wrong statements, one per (value, subject, place): repeating a value in one place is
        one claim; telling it to three people, or recording it on three rows, is three."""
        seen: set[tuple[str, str | None, str]] = set()
        added = self.success_words.get(kind, set())
        valued = {s.place for s in self.statements if s.found.kind == kind and self._folded(s) not in added}
        out = []
        for s in self.statements:
            if s.found.kind != kind or self.is_right(s) or self.is_neutral(s):
                continue
            if self._folded(s) in added and s.place not in valued:
                continue  # a bare "Done." asserts no value of the kind
            key = (repr(s.found.value), s.about, s.place)
            if key not in seen:
                seen.add(key)
                out.append(s)
        return out


def expected_items(items: list[Any], kinds: dict[str, ClaimKind]) -> list[Expected]:
    """The claim items among a rubric's (expanded) items; an unknown kind is the item's own error."""
    out = []
    for item in items:
        if not isinstance(item, PythonItem) or item.check != CHECK or item.points <= 0:
            continue
        args = item.args
        kind = kinds.get(args.get("kind", ""))
        if kind is None or "value" not in args:
            continue
        try:
            value = normalize(kind, args["value"])
        except (TypeError, ValueError):
            continue
        out.append(
            Expected(
                item_id=item.id,
                kind=args["kind"],
                value=value,
                where=channels.place(str(args.get("where", channels.ANSWER))),
                about=args.get("about"),
                points=item.points,
                tolerance=args.get("tolerance"),
            )
        )
    return out


# Where a list item ends: "Globex owes 12,300, Initech owes 5,000" and "2 urgent; 5 high" are two items.
_LIST_BREAK = r",\s|;|\||\t|\s(?:and|&)\s"


def _attribute(line: str, found: list[Found], subjects: dict[str, str]) -> list[str | None]:
    """For each value on the line, its subject: the nearest one named in the same list item
    ("Globex owes 12300 and Initech owes 5000"), else the nearest on the line (a table row's
    name in its first cell); None when the line names none."""
    spots = [
        (m.start(), m.end(), subject)
        for subject, pattern in subjects.items()
        for m in patterns.finditer(pattern, line, ignore_case=True)
    ]
    breaks = [m.start() for m in patterns.finditer(_LIST_BREAK, line, ignore_case=True)]

    def segment(position: int) -> int:
        return sum(b < position for b in breaks)

    out: list[str | None] = []
    for f in found:
        same_item = [s for s in spots if segment(s[0]) == segment(f.start)]
        best = min(same_item or spots, key=lambda s: max(s[0] - f.end, f.start - s[1], 0), default=None)
        out.append(best[2] if best else None)
    return out


def _statements(
    writing: channels.Writing, claims: Claims, subjects: dict[str, dict[str, str]]
) -> list[Statement]:
    out = []
    for raw in writing.text.splitlines():
        line = fold(raw)
        found = extract_line(claims.kinds, line)
        for kind in {f.kind for f in found}:
            mine = [f for f in found if f.kind == kind]
            abouts = (
                _attribute(line, mine, subjects.get(kind, {})) if subjects.get(kind) else [None] * len(mine)
            )
            out += [Statement(f, writing.place, about) for f, about in zip(mine, abouts, strict=True)]
    return out


def build(claims: Claims, items: list[Any], probe: Any, trajectory: Any) -> Statements:
    """Read everything the agent wrote and extract its statements (ProbeError when state is unreadable)."""
    original = claims.kinds
    claims = claims.model_copy(update={"kinds": {n: widened(k) for n, k in claims.kinds.items()}})
    result = Statements(kinds=dict(claims.kinds), expected=expected_items(items, claims.kinds))
    result.success_words = {n: added_words(k, original[n]) for n, k in claims.kinds.items() if k.values}
    if not claims.kinds:
        return result
    subjects: dict[str, dict[str, str]] = {}
    for e in result.expected:
        if e.about:
            subjects.setdefault(e.kind, {})[e.about] = whole_word(e.about)
    writings = (
        channels.answer(trajectory)
        + channels.posts(probe, claims.author)
        + channels.mail(probe, claims.author)
    )
    for where in sorted({e.where for e in result.expected if e.where.startswith(("file:", "sql:"))}):
        try:
            read = channels.document if where.startswith("file:") else channels.database
            writings += read(probe, where)
        except StateError as exc:
            result.notes.append(f"{where}: {exc}")
    # A kind whose items all read the database (a decision) is asserted there only: "9 approved"
    # in a summary is not a decision. Every other kind is read wherever the agent wrote.
    in_database = {e.kind for e in result.expected if e.where.startswith("sql:")}
    only_there = in_database - {e.kind for e in result.expected if not e.where.startswith("sql:")}
    for writing in writings:
        wanted = in_database if writing.place.startswith("sql:") else set(claims.kinds) - only_there
        read = claims.model_copy(update={"kinds": {n: k for n, k in claims.kinds.items() if n in wanted}})
        result.statements += _statements(writing, read, subjects)
    given = (
        channels.prompt(trajectory)
        + "\n"
        + channels.seeded_direct_messages(probe, {e.where for e in result.expected})
        + "\n"
        + channels.seeded_mail(probe, claims.author)
    )
    for line in given.splitlines():
        for f in extract_line(claims.kinds, fold(line)):
            result.neutral.setdefault(f.kind, []).append(f.value)
    for name, kind in claims.kinds.items():
        result.neutral.setdefault(name, []).extend(
            v for v in (_allowed(kind, a) for a in kind.allow) if v is not None
        )
    return result


def _allowed(kind: ClaimKind, value: Any) -> Any:
    try:
        return normalize(kind, value)
    except (TypeError, ValueError):
        return None
